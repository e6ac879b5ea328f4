"""Entries of the results record read before, kept packed by the SHA-256 of their bytes, so a build reads only new ones.

The record is laid out by sitegen (results.results_pieces): its head, then each run's entry, then its tail. A build with
a cache cuts the record at those joints, and takes each entry whose bytes it read before (under the SHA-256 of
sitegen's own code and of the entry's bytes) packed as it was kept; every other entry is read and checked alone, as
the only run of a record with the same head and tail. A record not laid out so, or any entry with a problem, or one
run twice, is read whole as without a cache, so every problem is placed as always. An entry carries its own SHA-256
and is checked on every read; one that fails it, or is not shaped as a packed result with its digest (ResultSpool.digest,
which keys a run's verification and pages: kept, so an unchanged entry is not unpacked to take it), is ignored and
replaced. As for
the other entries of a cache, these digests catch a damaged or foreign entry, not a forged one: keep the cache private.
"""

from __future__ import annotations

import hashlib
import marshal
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, ContextManager

from sitegen.core.errors import RecordsError
from sitegen.core.files import framed, is_sha256_hex, read_framed, replace_quietly
from sitegen.load.spool import ResultSpool
from sitegen.score.results import FORMAT, read_results

ENTRY_MAGIC = b"sitegen-results-entry/2\n"
HEAD = b'{\n  "format": "' + FORMAT.encode("ascii") + b'",\n  "runs": [\n    '
JOINT = b",\n    "
TAIL = b"\n  ]\n}\n"


@dataclass(frozen=True)
class RecordEntries:
    """A folder of results entries by key, inside a cache folder the caller found marked as sitegen's; `source` is the
    digest of sitegen's own code, which every key includes."""

    root: Path
    source: bytes

    def read(self, data: bytes, *, path: str, unpacking: Callable[[], ContextManager]) -> ResultSpool:
        """The record as read_results reads it, each entry read before taken from here, each new one kept."""
        entries = _entries(data)
        if entries is None:
            return read_results(data, path=path, unpacking=unpacking)
        results = ResultSpool(unpacking=unpacking)
        fresh = []
        for entry in entries:
            key = hashlib.sha256(ENTRY_MAGIC + self.source + entry).hexdigest()
            kept = self._get(key)
            if kept is None:
                try:
                    alone = read_results(HEAD + entry + TAIL, path=path)
                except RecordsError:
                    return read_results(data, path=path, unpacking=unpacking)  # placed in the whole record
                if len(alone) != 1:
                    return read_results(data, path=path, unpacking=unpacking)
                (run,) = alone
                kept = (run, *alone.packed(run), alone.digest(run))
                fresh.append((key, kept))
            if kept[0] in results:
                return read_results(data, path=path, unpacking=unpacking)  # says where the run appears twice
            results.add_packed(*kept)
        for key, kept in fresh:
            self._put(key, kept)
        return results

    def _get(self, key: str) -> tuple | None:
        data = read_framed(self.root / key, ENTRY_MAGIC)
        if data is None:
            return None
        try:
            kept = marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            return None
        if type(kept) is not tuple or len(kept) != 5 or not is_sha256_hex(kept[4]) or not ResultSpool.well_packed(kept[:4]):
            return None
        return kept

    def _put(self, key: str, kept: tuple) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(self.root / key, framed(ENTRY_MAGIC, marshal.dumps(kept, 4)))


def _entries(data: bytes) -> list[bytes] | None:
    """The bytes of each run's entry, when the record has sitegen's head and tail and its entries are objects at the
    joints sitegen writes; None otherwise (no entry, or another layout)."""
    if not (data.startswith(HEAD) and data.endswith(TAIL)) or len(data) <= len(HEAD) + len(TAIL):
        return None
    body = data[len(HEAD) : -len(TAIL)]
    if not (body.startswith(b"{\n") and body.endswith(b"\n    }")):
        return None
    parts = body.split(b"\n    }" + JOINT + b"{\n")
    entries = [part + b"\n    }" for part in parts[:-1]] + [parts[-1]]
    return [entries[0]] + [b"{\n" + entry for entry in entries[1:]]
