"""The case table's rows of runs written before, by the digest of each run's result, so a build writes only a new run's.

The case table (publish/tables.py) has one row per case version and repetition of every published run: 30,000 rows a run
at 1,000 case versions, made by unpacking the run's recorded result. A run's rows depend on nothing but its id and that
result and on sitegen's own code, so they are kept as CSV bytes under the SHA-256 of those, the result taken by the digest
of its values alone (ResultSpool.digest), not of its packed bytes: a result packed anew and one kept packed in the cache
may share strings differently, and would miss each other's rows. An entry carries its own SHA-256 and is checked on every read, and is used only when it is UTF-8 and every line is
a row of that run (its id in the first cell, CRLF line ends); anything else is ignored and the rows are written afresh.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from sitegen.core.files import framed, read_framed, replace_quietly

ENTRY_MAGIC = b"sitegen-case-rows/1\n"


@dataclass(frozen=True)
class CaseRowsKept:
    """A folder of runs' case-table rows by key, inside a cache folder the caller found marked as sitegen's; `source` is the
    digest of sitegen's own code, which every key includes."""

    root: Path
    source: bytes

    def key(self, run_id: str, result_digest: str) -> str:
        """The key of the rows of run `run_id` whose result has the digest `result_digest` (ResultSpool.digest)."""
        digest = hashlib.sha256(ENTRY_MAGIC + self.source)
        digest.update(len(run_id.encode("utf-8")).to_bytes(8, "big") + run_id.encode("utf-8"))
        digest.update(result_digest.encode("ascii"))
        return digest.hexdigest()

    def get(self, key: str, first_cell: bytes) -> bytes | None:
        """The rows kept under `key`, or None when there are none or they are not rows whose first cell is `first_cell` (the
        run's id as the table writes it) of an entry of its own digest."""
        data = read_framed(self.root / key, ENTRY_MAGIC)
        if data is None:
            return None
        try:
            data.decode("utf-8")
        except UnicodeDecodeError:
            return None
        start = first_cell + b","
        if data and not (data.endswith(b"\r\n") and all(line.startswith(start) for line in data[:-2].split(b"\r\n"))):
            return None
        return data

    def put(self, key: str, rows: bytes) -> None:
        """Keep a run's rows (written beside, then renamed); a cache that cannot be written costs only this."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(self.root / key, framed(ENTRY_MAGIC, rows))
