"""How a run's answers are packed (two tables, each distinct finding and engine answer once) and read back."""

from __future__ import annotations

import marshal
import zlib
from collections import defaultdict
from dataclasses import dataclass
from functools import partial
from itertools import count
from typing import Iterable, NamedTuple

from sitegen.core import model as m


class RawAnswer(NamedTuple):
    """An answer as the loader reads it, its engine answers already in the packed form `_Tables` writes.

    An engine answer is (status, ((reviewer id, (finding, ...)), ...), ((finding, before, after), ...), (finding, ...) or
    None), a finding the tuple of m.Finding's fields in order: the loader packs what it checked, never building objects
    that packing would only take apart again.
    """

    run: str
    case_version: str
    repetition: int
    answer: tuple
    rerun: tuple | None
    source: str


@dataclass(frozen=True)
class PackedRun:
    """One run's answers from one records file, packed: small and cheap to send from a worker, unlike the answers."""

    run: str
    keys: tuple[tuple[str, int, str], ...]  # (case version, repetition, records file), in the file's order
    blob: bytes


def pack_answers(answers: Iterable[m.Answer | RawAnswer]) -> tuple[PackedRun, ...]:
    """Answers grouped by run in order of first appearance, each run's packed into one blob."""
    by_run: dict[str, list[m.Answer]] = {}
    for answer in answers:
        by_run.setdefault(answer.run, []).append(answer)
    return tuple(PackedRun(run, tuple((a.case_version, a.repetition, a.source) for a in items),
                           zlib.compress(marshal.dumps(_Tables().pack(items)), 1))
                 for run, items in by_run.items())


class _Tables:
    """Packs answers as two tables, each distinct finding and engine answer once, and rows that point into them.

    An engine often repeats itself across repetitions and in its rerun. Finding the repeats here, once, while packing,
    spares every later unpacking (scoring, verifying, rendering) from hashing whole answers to find them again.
    """

    def __init__(self):
        # each new value gets the next number as it is first looked up, in C: the index setdefault(t, len(table)) gives
        self._findings: dict[tuple, int] = defaultdict(count().__next__)
        self._engines: dict[tuple, int] = defaultdict(count().__next__)

    def pack(self, answers: list[m.Answer | RawAnswer]) -> tuple:
        rows = tuple((a.case_version, a.repetition, self._engine(a.answer), self._engine(a.rerun), a.source) for a in answers)
        return tuple(self._findings), tuple(self._engines), rows

    def _engine(self, e: m.EngineAnswer | tuple | None) -> int:
        if e is None:
            return -1  # the last entry of the unpacked engines, which is None
        status, reviewers, corrections, report = e if type(e) is tuple else _raw_engine(e)
        finding = self._findings.__getitem__
        t = (status, tuple([(rid, tuple(map(finding, found))) for rid, found in reviewers]), corrections,
             None if report is None else tuple(map(finding, report)))
        return self._engines[t]


def _raw_engine(e: m.EngineAnswer) -> tuple:
    """An engine answer made elsewhere than the loader (a test, a factory) in RawAnswer's form."""
    def raw(f: m.Finding) -> tuple:
        return (f.id, f.kind, f.rule, f.supporting_rules, f.missing, f.quote, f.location, f.wording, f.trace)

    return (e.status, tuple((r.id, tuple(map(raw, r.findings))) for r in e.reviewers),
            tuple((c.finding, c.before, c.after) for c in e.quote_corrections),
            None if e.report is None else tuple(map(raw, e.report)))


class _Unpacker:
    """Unpacks one run's tables, each distinct answer and finding once: equal packed values give the very same object.

    The values are frozen, so sharing them is invisible, saves building them again, and makes comparing repeated
    answers a matter of identity. Within one records file the tables already say what repeats; across the files of
    one run, findings are matched by their values and answers by the findings they hold.
    """

    def __init__(self, files: int):
        self._shared = files > 1  # only then can two files hold the same answer
        self._findings: dict[tuple, m.Finding] = {}
        self._engines: dict[tuple, m.EngineAnswer] = {}

    def engines(self, findings: tuple[tuple, ...], engines: tuple[tuple, ...]) -> list[m.EngineAnswer | None]:
        """The engine answers of one file's tables, in table order, then None (which row index -1 gives)."""
        shared, known = self._shared, self._findings
        finding = [known.get(t) or known.setdefault(t, _new_finding(t)) for t in findings] if shared else list(map(_new_finding, findings))
        out: list[m.EngineAnswer | None] = []
        for status, reviewers, corrections, report in engines:
            engine = _new_engine((
                status,
                tuple([_new_reviewer((rid, tuple([finding[i] for i in found]))) for rid, found in reviewers]),
                tuple(map(_new_correction, corrections)) if corrections else (),
                None if report is None else tuple([finding[i] for i in report]),
            ))
            out.append(self._engines.setdefault(_identity(engine), engine) if shared else engine)
        out.append(None)
        return out


# the model's named tuples made from their fields in order by tuple's own constructor, skipping each one's Python-level
# __new__ (the packed tables hold every field, in the order the asserts below check)
_new = tuple.__new__
_new_finding, _new_engine, _new_answer = partial(_new, m.Finding), partial(_new, m.EngineAnswer), partial(_new, m.Answer)
_new_reviewer, _new_correction = partial(_new, m.Reviewer), partial(_new, m.QuoteCorrection)
assert m.Finding._fields == ("id", "kind", "rule", "supporting_rules", "missing", "quote", "location", "wording", "trace")
assert m.EngineAnswer._fields == ("status", "reviewers", "quote_corrections", "report")
assert m.Answer._fields == ("run", "case_version", "repetition", "answer", "rerun", "source")
assert m.Reviewer._fields == ("id", "findings") and m.QuoteCorrection._fields == ("finding", "before", "after")


def _identity(e: m.EngineAnswer) -> tuple:
    # findings are shared by value, so equal answers hold the very same findings: their ids stand for them
    return (e.status, tuple((r.id, tuple(map(id, r.findings))) for r in e.reviewers), e.quote_corrections,
            None if e.report is None else tuple(map(id, e.report)))


def unpack_run(run: str, blobs: list[bytes]) -> dict[tuple[str, int], m.Answer]:
    """One run's answers by (case version, repetition), from the blobs pack_answers made of its records files."""
    unpacked = {}
    unpacker = _Unpacker(len(blobs))
    answer_of = _new_answer
    for blob in blobs:
        findings, engines, rows = marshal.loads(zlib.decompress(blob))
        engine = unpacker.engines(findings, engines)
        for case_version, repetition, answer, rerun, source in rows:
            unpacked[(case_version, repetition)] = answer_of((run, case_version, repetition, engine[answer], engine[rerun], source))
    return unpacked


def unpack_statuses(blobs: list[bytes]) -> dict[tuple[str, int], tuple[str, str | None]]:
    """Each answer's status and its rerun's (None without one) by (case version, repetition), read from the tables
    without making the answers."""
    found = {}
    for blob in blobs:
        _, engines, rows = marshal.loads(zlib.decompress(blob))
        status = [engine[0] for engine in engines] + [None]  # as _Unpacker.engines: row index -1 is None
        for case_version, repetition, answer, rerun, _ in rows:
            found[(case_version, repetition)] = (status[answer], status[rerun])
    return found
