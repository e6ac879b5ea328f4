"""`sitegen seal`: the maintainer's deliberate step that appends this publication to the checked-in log."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from sitegen.build import check_records, published_files
from sitegen.core.errors import UsageError
from sitegen.load.publications import FOLDER, LOG
from sitegen.publish.chain import entry_line, result_digest, stored_name
from sitegen.publish.site import sha256sums


@dataclass(frozen=True)
class SealReport:
    lines: tuple[str, ...]
    written: tuple[str, ...]  # paths written, empty when this publication was already the newest entry


def seal_publication(records_dir: Path, *, date: str) -> SealReport:
    """Check everything a build checks, then append one log entry for this publication and store its SHA256SUMS.

    Nothing is written when the newest entry already names this SHA256SUMS and these results, so sealing twice is harmless.
    """
    records_dir = Path(records_dir)
    checked = check_records(records_dir)
    sums = sha256sums(published_files(checked.records, checked.downloads, checked.exports))
    sums_digest = hashlib.sha256(sums).hexdigest()
    results = {run_id: result_digest(checked.results[run_id]) for run_id in sorted(checked.results)}
    head = checked.provenance.head
    if head is not None and head.sha256sums == sums_digest and dict(head.results) == results:
        return SealReport((f"already sealed: publication {head.sequence} of {head.date} names this SHA256SUMS ({sums_digest}) "
                           f"and these {len(results)} runs; nothing written",), ())
    if head is not None and date < head.date:
        raise UsageError(f"--date {date} is before the newest sealed publication ({head.sequence}, {head.date})")
    line = entry_line(sequence=1 if head is None else head.sequence + 1, date=date,
                      previous=None if head is None else head.digest, sha256sums=sums_digest, results=results)
    log_path, sums_path = records_dir / LOG, records_dir / FOLDER / stored_name(sums_digest)
    sums_path.parent.mkdir(exist_ok=True)
    if not sums_path.exists():
        _replace(sums_path, sums)
    _replace(log_path, (checked.provenance.log or b"") + line)
    sequence = 1 if head is None else head.sequence + 1
    return SealReport((
        f"sealed publication {sequence} of {date}: SHA256SUMS {sums_digest}, {len(results)} runs",
        f"log entry {sequence} has the SHA-256 {hashlib.sha256(line).hexdigest()}",
        f"wrote {log_path} and {sums_path}; commit them with the records",
    ), (str(log_path), str(sums_path)))


def _replace(path: Path, data: bytes) -> None:
    """Replace `path` by one rename, so a full disk or a killed process leaves the old file, never half a new one."""
    temporary = path.with_name(f".{path.name}.tmp")
    try:
        temporary.write_bytes(data)
        temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


