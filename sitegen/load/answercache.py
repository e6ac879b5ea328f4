"""Answers files checked before, kept packed by their SHA-256, so a build with a cache decodes and checks only those that changed.

An entry holds one answers file as the loader packed it after finding nothing wrong with it (spool.PackedRun, one per
run), with the facts of the other records its checks read (answers.context_facts). Its key is the SHA-256 of sitegen's
own code (the schemas included), the file's name and bytes (their SHA-256) and how the configuration publishes it. It is
used only when those facts are the same now and no answer in it was read from an earlier file; otherwise the file is
read and checked afresh, so its problems are reported exactly as without a cache. An entry carries its own SHA-256 and
is checked on every read; one that fails it, or is not shaped as a packed answers file down to every finding (tuples
of plain values, indexes inside their tables, every answer from this file), is ignored and replaced. As for the other
entries of a cache, these digests catch a damaged or foreign entry, not a forged one: keep the cache private.
"""

from __future__ import annotations

import hashlib
import marshal
import zlib
from dataclasses import dataclass
from pathlib import Path

from sitegen.core.files import framed, read_framed, replace_quietly
from sitegen.load.answerpack import PackedRun

ENTRY_MAGIC = b"sitegen-answers/1\n"


@dataclass(frozen=True)
class CheckedAnswers:
    """A folder of answers files checked before, inside a cache folder the caller found marked as sitegen's; `source` is
    the digest of sitegen's own code, which every key includes."""

    root: Path
    source: bytes

    def key(self, name: str, sha256: str, published: bool, internal: frozenset[str]) -> str:
        """The digest naming the entry of the answers file `name` with these bytes, published (or not) this way."""
        digest = hashlib.sha256(ENTRY_MAGIC + self.source)
        digest.update(marshal.dumps((name, sha256, published, tuple(sorted(internal))), 0))
        return digest.hexdigest()

    def get(self, key: str, name: str) -> tuple[tuple, tuple[PackedRun, ...]] | None:
        """The facts and packed runs kept under `key` for the file `name`, or None when there is no well-formed entry."""
        data = read_framed(self.root / key, ENTRY_MAGIC)
        if data is None:
            return None
        try:
            facts, parts = marshal.loads(data)
            packed = tuple(PackedRun(run, keys, blob) for run, keys, blob in parts)
        except (ValueError, EOFError, TypeError):
            return None
        if not all(_packed_run(part, name) for part in packed):
            return None
        return facts, packed

    def put(self, key: str, facts: tuple, packed: tuple[PackedRun, ...]) -> None:
        """Keep a file found clean (written beside, then renamed); a cache that cannot be written costs only this entry."""
        data = marshal.dumps((facts, tuple((part.run, part.keys, part.blob) for part in packed)), 4)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(self.root / key, framed(ENTRY_MAGIC, data))


def _packed_run(part: PackedRun, name: str) -> bool:
    """Whether a run read back is shaped as spool.pack_answers packs one run's answers of the file `name`."""
    if type(part.run) is not str or type(part.keys) is not tuple or type(part.blob) is not bytes:
        return False
    try:
        tables = marshal.loads(zlib.decompress(part.blob))
    except (ValueError, EOFError, TypeError, zlib.error):
        return False
    if type(tables) is not tuple or len(tables) != 3:
        return False
    findings, engines, rows = tables
    if type(findings) is not tuple or type(engines) is not tuple or type(rows) is not tuple:
        return False
    if not all(_finding(f) for f in findings) or not all(_engine(e, len(findings)) for e in engines):
        return False
    keys = []
    for row in rows:
        if type(row) is not tuple or len(row) != 5:
            return False
        case_version, repetition, answer, rerun, source = row
        if (type(case_version) is not str or type(repetition) is not int or source != name
                or not _index(answer, len(engines)) or not _index(rerun, len(engines))):
            return False
        keys.append((case_version, repetition, source))
    return part.keys == tuple(keys)


def _index(value: object, size: int) -> bool:
    """An engine answer's row in its table, or -1 for none."""
    return type(value) is int and -1 <= value < size


def _strings(value: object) -> bool:
    return type(value) is tuple and all(type(s) is str for s in value)


def _finding(f: object) -> bool:
    """m.Finding's fields in order, each of its type."""
    if type(f) is not tuple or len(f) != 9:
        return False
    fid, kind, rule, supporting, missing, quote, span, wording, trace = f
    return (type(fid) is str and type(kind) is str and type(rule) is str and _strings(supporting) and type(missing) is bool
            and (quote is None or type(quote) is str) and type(wording) is str and _strings(trace)
            and (span is None or (type(span) is tuple and len(span) == 2 and all(type(n) is int for n in span))))


def _engine(e: object, findings: int) -> bool:
    """An engine answer as answerpack._Tables packs it: status, reviewers and report pointing into the findings, corrections."""
    if type(e) is not tuple or len(e) != 4:
        return False
    status, reviewers, corrections, report = e
    if type(status) is not str or type(reviewers) is not tuple or type(corrections) is not tuple:
        return False
    if not all(type(c) is tuple and len(c) == 3 and _strings(c) for c in corrections):
        return False
    for reviewer in reviewers:
        if type(reviewer) is not tuple or len(reviewer) != 2 or type(reviewer[0]) is not str or not _rows(reviewer[1], findings):
            return False
    return report is None or _rows(report, findings)


def _rows(value: object, size: int) -> bool:
    return type(value) is tuple and all(type(i) is int and 0 <= i < size for i in value)
