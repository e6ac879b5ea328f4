"""What may leave the building: published files hold no internal field, and are served exactly as checked in."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic, PublicationError
from sitegen.core.files import framed, read_framed, replace_quietly
from sitegen.load.jsonread import escape_pointer, parse_json
from sitegen.publish.metadata import public_metadata


@dataclass(frozen=True)
class Download:
    """A published records file: its served name and the file, whose exact bytes are read when they are written."""

    name: str
    record: str
    source: m.SourceFile

    @property
    def data(self) -> bytes:
        return self.source.data

    def pieces(self):
        return self.source.pieces()

    def copy_to(self, out) -> None:
        self.source.copy_to(out)

    @property
    def size(self) -> int:
        return self.source.size

    @property
    def sha256(self) -> str:
        return self.source.sha256


CLEAN_MAGIC = b"sitegen-clean-download/1\n"


@dataclass(frozen=True)
class CleanFiles:
    """Records files found fit to publish before (no internal field, no unpublished run), by the digest of their bytes
    and of what they were checked for, inside a cache folder the caller found marked as sitegen's; `source` is the digest
    of sitegen's own code, which every key includes. An entry is an empty claim framed with its digest: a damaged one is
    no claim, and the file is checked afresh."""

    root: Path
    source: bytes

    def _path(self, sha256: str, internal: set[str], hidden: list[str]) -> Path:
        digest = hashlib.sha256(CLEAN_MAGIC + self.source)
        digest.update(json.dumps([sha256, sorted(internal), sorted(hidden)]).encode("utf-8"))
        return self.root / digest.hexdigest()

    def known(self, sha256: str, internal: set[str], hidden: list[str]) -> bool:
        return read_framed(self._path(sha256, internal, hidden), CLEAN_MAGIC) == b"clean"

    def keep(self, sha256: str, internal: set[str], hidden: list[str]) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(self._path(sha256, internal, hidden), framed(CLEAN_MAGIC, b"clean"))


def collect_downloads(records: m.Records, clean: CleanFiles | None = None) -> tuple[Download, ...]:
    """The files to publish, refusing any that carries an internal field, names an unpublished run, or is not a records file.

    Each file is read once here (the largest are hundreds of megabytes) and again only when it is written; with `clean`,
    a file with the same bytes found fit before for the same internal fields and unpublished runs is not read here.
    """
    problems: list[Diagnostic] = []
    downloads = []
    internal = set(records.config.internal_fields)
    hidden = [r.id for r in records.runs if not r.published]
    for published in records.config.publish:
        source = records.files.get(published.record)
        if source is None:
            problems.append(Diagnostic(published.record, None, None, None, "published record was not loaded", "publish.unknown-record"))
            continue
        if clean is None or not clean.known(source.sha256, internal, hidden):
            refused = _refusals(published.record, source, internal, hidden)
            problems.extend(refused)
            if clean is not None and not refused:
                clean.keep(source.sha256, internal, hidden)
        downloads.append(Download(published.name, published.record, source))
    if problems:
        raise PublicationError(problems)
    return tuple(sorted(downloads, key=lambda d: d.name))


def collect_metadata(records: m.Records) -> tuple[Download, ...]:
    """The public run metadata (publish/metadata.py), refused as any published file is if it holds an internal field
    or names an unpublished run."""
    internal = set(records.config.internal_fields)
    hidden = [r.id for r in records.runs if not r.published]
    problems: list[Diagnostic] = []
    downloads = []
    for name, record, file in public_metadata(records):
        problems.extend(_refusals(name, file, internal, hidden))
        downloads.append(Download(name, record, file))
    if problems:
        raise PublicationError(problems)
    return tuple(downloads)


def _refusals(shown: str, file, internal: set[str], hidden: list[str]) -> list[Diagnostic]:
    """What keeps one file (a SourceFile or InMemoryFile) from being published: an internal field (however its key is
    written), an unpublished run.

    A key is written "name" unless its letters are escaped (\\u0069...), so a file with neither is free of internal
    fields, and the file is read a piece at a time to look for them (_found_in); only a file that may hold one is parsed
    whole. Reading or parsing the largest records whole only to find nothing would cost more memory than the rest of the
    build. Run ids are safe ASCII, so their JSON form is found in the bytes as they are.
    """
    keys = [json.dumps(name).encode("utf-8") for name in internal]
    runs = {json.dumps(run_id).encode("utf-8"): run_id for run_id in hidden}
    found = _found_in(file, [b"\\u", *keys, *runs] if keys else list(runs))
    problems: list[Diagnostic] = []
    if found.intersection([b"\\u", *keys]):
        doc, parse_problems = parse_json(shown, file.data)
        if parse_problems:
            return list(parse_problems)
        for pointer, key in _keys(doc.value, ""):
            if key in internal:
                problems.append(doc.diagnostic(pointer, f'internal field "{key}" must never reach a published file', "publish.internal-field"))
    for pattern, run_id in runs.items():
        if pattern in found:
            problems.append(Diagnostic(shown, None, None, None,
                                       f'unpublished run "{run_id}" is mentioned in a published file', "publish.unpublished-run"))
    return problems


def _found_in(file, patterns: list[bytes]) -> set[bytes]:
    """Which of `patterns` the file's bytes hold, read a piece at a time (file.pieces); each piece is searched with the end
    of the one before, as long as the longest pattern less one byte, so a pattern split between two is found."""
    found: set[bytes] = set()
    if not patterns:
        return found
    keep, tail = max(map(len, patterns)) - 1, b""
    for piece in file.pieces():
        window = tail + piece
        found.update(p for p in patterns if p not in found and p in window)
        tail = window[-keep:] if keep else b""
    return found


def _keys(value: object, pointer: str):
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{pointer}/{escape_pointer(key)}"
            yield child, key
            yield from _keys(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _keys(item, f"{pointer}/{index}")
