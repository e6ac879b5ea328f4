"""Entries of the results record read before, kept packed by the SHA-256 of their bytes, so a build reads only new ones.

The record is laid out by sitegen (results.results_pieces): its head, then each run's entry, then its tail. A build
cuts the record at those joints (read_by_entry) and, with a cache, takes each entry whose bytes it read before (under
the SHA-256 of sitegen's own code and of the entry's bytes) packed as it was kept; every other entry is read and checked
alone, as the only run of a record with the same head and tail. A record not laid out so, or any entry with a problem, or one
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

    def key(self, entry: bytes | memoryview) -> str:
        """The key of an entry's bytes: the SHA-256 of sitegen's own code and of them."""
        digest = hashlib.sha256(ENTRY_MAGIC + self.source)
        digest.update(entry)
        return digest.hexdigest()

    def get(self, key: str) -> tuple | None:
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

    def put(self, key: str, kept: tuple) -> None:
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(self.root / key, framed(ENTRY_MAGIC, marshal.dumps(kept, 4)))


def read_by_entry(data: bytes, *, path: str, unpacking: Callable[[], ContextManager],
                  kept: RecordEntries | None = None) -> ResultSpool:
    """The record as read_results reads it, one run's entry at a time (with `kept`, an entry read before taken from there,
    each new one kept there): at 10,000 case versions (a record of 274 MB) loading and reading it peaked at 950 MiB parsed
    whole, 803-843 MiB an entry at a time. A record not laid out as sitegen writes it, an entry with a problem or a run
    recorded twice is read whole, so every problem is placed in the whole record as always."""
    spans = _entries(data)
    if spans is None:
        return read_results(data, path=path, unpacking=unpacking)
    results = ResultSpool(unpacking=unpacking)
    fresh = []
    view = memoryview(data)
    for start, end in spans:
        key = kept.key(view[start:end]) if kept is not None else ""
        found = kept.get(key) if kept is not None else None
        if found is None:
            try:
                alone = read_results(HEAD + data[start:end] + TAIL, path=path)
            except RecordsError:
                return read_results(data, path=path, unpacking=unpacking)  # placed in the whole record
            if len(alone) != 1:
                return read_results(data, path=path, unpacking=unpacking)
            (run,) = alone
            # the digest is taken here only to be kept; without a cache it is taken when asked for (ResultSpool.digest)
            found = (run, *alone.packed(run), alone.digest(run) if kept is not None else None)
            fresh.append((key, found))
        if found[0] in results:
            return read_results(data, path=path, unpacking=unpacking)  # says where the run appears twice
        results.add_packed(*found)
    if kept is not None:
        for key, found in fresh:
            kept.put(key, found)
    return results


def _entries(data: bytes) -> list[tuple[int, int]] | None:
    """Where each run's entry stands in the record (start and end offsets), when the record has sitegen's head and tail
    and its entries are objects at the joints sitegen writes; None otherwise (no entry, or another layout). Offsets, not
    copies: the record may be hundreds of megabytes, and each copy of it would stay alive while the entries are read."""
    first, last = len(HEAD), len(data) - len(TAIL)
    if not (data.startswith(HEAD) and data.endswith(TAIL)) or last <= first:
        return None
    if not (data.startswith(b"{\n", first) and data.endswith(b"\n    }", first, last)):
        return None
    closing, separator = b"\n    }", b"\n    }" + JOINT + b"{\n"
    spans, start = [], first
    while (at := data.find(separator, start, last)) != -1:
        spans.append((start, at + len(closing)))
        start = at + len(closing) + len(JOINT)
    spans.append((start, last))
    return spans
