"""A publication read back: its downloads copied into a snapshot, laid out again as the records folder they were published
from, so the build's own loader, scorer and renderer read them; problems are told at the downloaded file, not the copy."""

from __future__ import annotations

import json
import os
import shutil
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Mapping

from sitegen.audit.source import SUMS_LIMIT, Copied, Origin, unreadable
from sitegen.audit.sums import Sum, name_problem, parse_sums
from sitegen.core.errors import Diagnostic
from sitegen.load.publications import ALLOWED_SIGNERS, LOG
from sitegen.load.publications import FOLDER as PUBLICATIONS
from sitegen.load.records import CONFIG_FILE, RUNS_FILE
from sitegen.load.setups import SETUPS_FILE
from sitegen.publish.chain import parse_log, stored_name
from sitegen.publish.metadata import FOLDER
from sitegen.publish.signing import SIGNATURE
from sitegen.publish.site import SUMS

# Files beside SHA256SUMS that it cannot list, since they check it: itself, its signature, the key line the signature is
# checked with, and the publication log (with, in publications/, every SHA256SUMS the log names). Read when present.
OUTSIDE_SUMS = (SUMS, SIGNATURE, ALLOWED_SIGNERS, LOG)


@dataclass(frozen=True)
class Publication:
    """What SHA256SUMS lists, the bytes read of every file (None: missing), and the records folder laid out of them."""

    origin: Origin
    snapshot: Path  # the files as read, under their names below downloads/
    sums: tuple[Sum, ...]
    copied: Mapping[str, Copied | None]
    unlisted: tuple[str, ...] | None  # files in the folder that SHA256SUMS does not list; None over HTTP (nothing to list)
    records_dir: Path
    shown: Mapping[str, str]  # path of a file in records_dir -> where the reader finds the published file

    def read(self, name: str) -> bytes | None:
        """A downloaded file's bytes as read (for the checks), or None when it is missing."""
        if self.copied.get(name) is None:
            return None
        return (self.snapshot / name).read_bytes()

    def where(self, name: str) -> str:
        """Where the reader finds the downloaded file `name`: a path below the folder named, or an address."""
        return self.origin.downloads.shown(name)

    def relocate(self, diagnostics) -> tuple[Diagnostic, ...]:
        """Diagnostics about the laid-out records, placed at the downloaded files instead."""
        inside = str(self.records_dir)
        outside = self.where("").rstrip("/")
        return tuple(replace(d, path=self.shown.get(d.path, d.path.replace(inside, outside)),
                             message=d.message.replace(inside, outside)) for d in diagnostics)


def read_publication(origin: Origin, folder: Path) -> Publication:
    """Read SHA256SUMS, every file it lists and (from a folder) every file it does not, into `folder`; raise
    UnreadableError when SHA256SUMS cannot be read or a file cannot be read at all (a missing file is a finding)."""
    reader = origin.downloads
    snapshot = folder / "downloads"
    sums_copy = reader.copy(SUMS, snapshot / SUMS, limit=SUMS_LIMIT)
    if sums_copy is None:
        raise unreadable(reader.shown(SUMS), "there is no SHA256SUMS here: name a site's downloads folder or address",
                         "verify.no-sums")
    sums = parse_sums((snapshot / SUMS).read_bytes(), reader.shown(SUMS))
    listed = {s.name for s in sums}
    present = reader.names()
    unlisted = None if present is None else tuple(n for n in present if n not in listed and n not in OUTSIDE_SUMS
                                                  and not n.startswith(f"{PUBLICATIONS}/"))
    copied: dict[str, Copied | None] = {SUMS: sums_copy}
    for name in sorted(listed | set(unlisted or ()) | set(OUTSIDE_SUMS[1:])):
        copied[name] = reader.copy(name, snapshot / name)
    if copied.get(LOG) is not None:  # every SHA256SUMS the log names, read by name (an address cannot be listed)
        entries, _ = parse_log((snapshot / LOG).read_bytes(), path=reader.shown(LOG))
        for entry in entries:
            name = f"{PUBLICATIONS}/{stored_name(entry.sha256sums)}"
            copied.setdefault(name, reader.copy(name, snapshot / name))
    records_dir = folder / "records"
    shown = _lay_out(snapshot, records_dir, copied, reader)
    return Publication(origin, snapshot, sums, copied, unlisted, records_dir, shown)


def _lay_out(snapshot: Path, records_dir: Path, copied: Mapping[str, Copied | None], reader) -> dict[str, str]:
    """The records folder the downloads were published from: metadata/<file> as <file>, and each records file the
    published configuration names under its records name. Unsafe or clashing names are left out (the loader then
    reports the file missing, at the download)."""
    records_dir.mkdir(parents=True, exist_ok=True)
    placed: dict[str, str] = {}  # records name -> downloaded name
    prefix = f"{FOLDER}/"
    for name in copied:
        if name.startswith(prefix) and copied[name] is not None:
            placed[name[len(prefix):]] = name
        elif (name in (ALLOWED_SIGNERS, LOG) or name.startswith(f"{PUBLICATIONS}/")) and copied[name] is not None:
            placed[name] = name  # where the build reads them, beside the records, so the rebuilt downloads page says the same
    for record, name in _published(snapshot / FOLDER / CONFIG_FILE):
        if copied.get(name) is not None and record not in placed:
            placed[record] = name
    shown: dict[str, str] = {}
    for record, name in placed.items():
        target = records_dir / record
        target.parent.mkdir(parents=True, exist_ok=True)
        try:
            os.link(snapshot / name, target)
        except OSError:
            shutil.copyfile(snapshot / name, target)
        shown[str(target)] = reader.shown(name)
    for record in (RUNS_FILE, SETUPS_FILE, CONFIG_FILE):  # where a missing metadata file would have stood
        shown.setdefault(str(records_dir / record), reader.shown(f"{prefix}{record}"))
    for record, name in _published(snapshot / FOLDER / CONFIG_FILE):
        shown.setdefault(str(records_dir / record), reader.shown(name))
    return shown


def _published(config: Path) -> list[tuple[str, str]]:
    """(records name, downloaded name) of each file the published configuration publishes, when both names are safe."""
    try:
        value = json.loads(config.read_bytes())
        entries = value["publish"]
        pairs = [(p["record"], p["name"]) for p in entries]
    except (OSError, ValueError, KeyError, TypeError):
        return []  # the loader reports the configuration itself
    return [(r, n) for r, n in pairs if isinstance(r, str) and isinstance(n, str) and name_problem(r) is None
            and name_problem(n) is None and not r.startswith(f"{FOLDER}/")]
