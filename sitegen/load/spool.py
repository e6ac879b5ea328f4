"""A large publication's answers kept packed in memory, one run unpacked at a time, so memory does not grow with runs."""

from __future__ import annotations

import hashlib
import marshal
import zlib
from itertools import count
from collections import OrderedDict, defaultdict
from contextlib import nullcontext
from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Callable, ContextManager, Iterable, Iterator, Mapping, NamedTuple

from sitegen.core import model as m

Key = tuple[str, str, int]  # (run, case version, repetition)


class _Unpacked:
    """The last few runs unpacked, each inside the `unpacking` context its owner's caller chose.

    Unpacking makes hundreds of thousands of small objects that all stay alive: the build passes a collector policy
    (core/collector.frozen_when_made) so that no collection rescans them; a library default does nothing.
    """

    def __init__(self, keep: int, unpacking: Callable[[], ContextManager] = nullcontext):
        self.keep = keep
        self.unpacking = unpacking
        self.runs: OrderedDict[str, object] = OrderedDict()

    def get(self, run: str, unpack):
        found = self.runs.get(run)
        if found is not None:
            self.runs.move_to_end(run)
            return found
        with self.unpacking():
            found = unpack(run)
        self.runs[run] = found
        while len(self.runs) > self.keep:
            self.runs.popitem(last=False)
        return found

    def forget(self, run: str) -> None:
        self.runs.pop(run, None)


class AnswerSpool(Mapping[Key, m.Answer]):
    """The answers of every run, mapped by (run, case version, repetition) like a dict.

    Each records file's answers are packed per run (marshal of plain tuples, then zlib) as the loader finishes the
    file; reading one answer unpacks its whole run, and only the last `keep` runs stay unpacked. Every consumer
    works run by run (scoring, a run's pages), so each run is unpacked about once per pass.
    """

    def __init__(self, keep: int = 2, *, unpacking: Callable[[], ContextManager] = nullcontext):
        self._sources: dict[str, dict[tuple[str, int], str]] = {}  # run -> (case version, repetition) -> records file
        self._packs: dict[str, list[bytes]] = {}
        self._unpacked = _Unpacked(keep, unpacking)

    def add(self, answers: Iterable[m.Answer | RawAnswer]) -> None:
        """Pack answers (of one records file, typically) and forget the objects."""
        self.add_packed(pack_answers(answers))

    def add_packed(self, packed: Iterable[PackedRun]) -> None:
        """Take runs packed elsewhere (a worker process), as `add` would have packed them."""
        for part in packed:
            sources = self._sources.setdefault(part.run, {})
            for case_version, repetition, source in part.keys:
                sources[(case_version, repetition)] = source
            self._packs.setdefault(part.run, []).append(part.blob)
            self._unpacked.forget(part.run)

    def source(self, key: Key) -> str | None:
        """The records file an answer came from, without unpacking it."""
        return self._sources.get(key[0], {}).get((key[1], key[2]))

    def sources(self, run: str) -> frozenset[str]:
        """The records files a run's answers came from, without unpacking them."""
        return frozenset(self._sources.get(run, {}).values())

    def __getitem__(self, key: Key) -> m.Answer:
        run, case_version, repetition = key
        if (case_version, repetition) not in self._sources.get(run, ()):
            raise KeyError(key)
        return self._run(run)[(case_version, repetition)]

    def __contains__(self, key: object) -> bool:
        try:
            run, case_version, repetition = key  # type: ignore[misc]
        except (TypeError, ValueError):
            return False
        return (case_version, repetition) in self._sources.get(run, ())

    def __iter__(self) -> Iterator[Key]:
        for run, sources in self._sources.items():
            for case_version, repetition in sources:
                yield (run, case_version, repetition)

    def __len__(self) -> int:
        return sum(len(s) for s in self._sources.values())

    def of_run(self, run: str) -> Mapping[tuple[str, int], m.Answer]:
        """One run's answers by (case version, repetition), unpacked once: what a pass over a whole run reads."""
        if run not in self._packs:
            return MappingProxyType({})
        return MappingProxyType(self._run(run))

    def statuses(self, run: str) -> dict[tuple[str, int], tuple[str, str | None]]:
        """Each of a run's answers' status and its rerun's (None without one) by (case version, repetition), read from the
        packed tables without unpacking the answers: all a run's grid shows of them (at 10,000 case versions a run's
        answers unpacked take about 30 MiB in each process rendering run pages)."""
        found = {}
        for pack in self._packs.get(run, ()):
            _, engines, rows = marshal.loads(zlib.decompress(pack))
            status = [engine[0] for engine in engines] + [None]  # as _Unpacker.engines: row index -1 is None
            for case_version, repetition, answer, rerun, _ in rows:
                found[(case_version, repetition)] = (status[answer], status[rerun])
        return found

    def _run(self, run: str) -> dict[tuple[str, int], m.Answer]:
        return self._unpacked.get(run, self._unpack)

    def _unpack(self, run: str) -> dict[tuple[str, int], m.Answer]:
        unpacked = {}
        packs = self._packs[run]
        unpacker = _Unpacker(len(packs))
        answer_of = _new_answer
        for pack in packs:
            findings, engines, rows = marshal.loads(zlib.decompress(pack))
            engine = unpacker.engines(findings, engines)
            for case_version, repetition, answer, rerun, source in rows:
                unpacked[(case_version, repetition)] = answer_of((run, case_version, repetition, engine[answer], engine[rerun], source))
        return unpacked


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


class ResultSpool(Mapping[str, m.RunResult]):
    """Run results mapped by run id like a dict, packed the same way: at scale one run's results hold 30,000 case entries."""

    def __init__(self, keep: int = 2, *, unpacking: Callable[[], ContextManager] = nullcontext):
        self._packs: dict[str, bytes] = {}
        self._heads: dict[str, tuple[str, tuple[m.MeasureResult, ...]]] = {}
        self._prints: dict[str, object] = {}
        self._digests: dict[str, str] = {}  # digest(run), once taken or kept with the pack
        self._unpacked = _Unpacked(keep, unpacking)

    def add(self, result: m.RunResult) -> None:
        self._packs[result.run] = zlib.compress(marshal.dumps(_pack_result(result)), 1)
        self._heads[result.run] = (result.outcome, result.measures)
        self._prints.pop(result.run, None)
        self._digests.pop(result.run, None)
        self._unpacked.forget(result.run)

    @staticmethod
    def pack(result: m.RunResult) -> tuple[str, bytes, str, tuple[tuple, ...]]:
        """(run, *packed(run)) of one result without a spool: where a result is made (a forked worker), so only these
        bytes travel and the receiving spool takes them with add_packed, packing nothing itself."""
        spool = ResultSpool()
        spool.add(result)
        return (result.run, *spool.packed(result.run))

    def add_print(self, run: str, laid_out: object) -> None:
        """Keep beside a run's pack what the results record's writer measured of its entry when the result was made
        (score/results.py: EntryPrint), so a record is checked against it without unpacking and laying out the run."""
        self._prints[run] = laid_out

    def printed(self, run: str) -> object | None:
        """What add_print kept for the run as it is packed now, or None."""
        return self._prints.get(run)

    def packed(self, run: str) -> tuple[bytes, str, tuple[tuple, ...]]:
        """A run's result as it is packed here, with its outcome and measures as plain values: what add_packed takes."""
        outcome, measures = self._heads[run]
        return self._packs[run], outcome, tuple((x.measure, x.state, x.passed, x.observed, x.failed, x.pending, x.dismissed)
                                                for x in measures)

    def add_packed(self, run: str, pack: bytes, outcome: str, measures: tuple[tuple, ...], digest: str | None = None) -> None:
        """Take a run's result as `packed` gave it (kept in a cache: see well_packed), with its `digest` when that was kept
        too (score/recordcache.py), so it is not taken again."""
        self._packs[run] = pack
        self._heads[run] = (outcome, tuple(m.MeasureResult(*x) for x in measures))
        self._prints.pop(run, None)
        if digest is None:
            self._digests.pop(run, None)
        else:
            self._digests[run] = digest
        self._unpacked.forget(run)

    @staticmethod
    def well_packed(kept: object) -> bool:
        """Whether (run, *packed(run)) read back has that form: a run id, bytes, an outcome, and measures of seven fields."""
        return (type(kept) is tuple and len(kept) == 4 and type(kept[0]) is str and type(kept[1]) is bytes
                and type(kept[2]) is str and type(kept[3]) is tuple
                and all(type(x) is tuple and len(x) == 7 for x in kept[3]))

    def adopt(self, other: ResultSpool, run: str) -> None:
        """Take one run's result from another spool as it is packed there, without unpacking it."""
        self._packs[run] = other._packs[run]
        self._heads[run] = other._heads[run]
        self._prints.pop(run, None)
        if run in other._prints:
            self._prints[run] = other._prints[run]
        if run in other._digests:
            self._digests[run] = other._digests[run]
        else:
            self._digests.pop(run, None)
        self._unpacked.forget(run)

    def digest(self, run: str) -> str:
        """The SHA-256 of a run's result in a form that depends on its values alone (marshal version 0 shares nothing,
        so which strings happen to be interned, or referred to twice, does not change it); taken once per run."""
        if run not in self._digests:
            self._digests[run] = hashlib.sha256(marshal.dumps(marshal.loads(zlib.decompress(self._packs[run])), 0)).hexdigest()
        return self._digests[run]

    def head(self, run: str) -> tuple[str, tuple[m.MeasureResult, ...]]:
        """A run's outcome and measures, kept unpacked: a summary line needs no more."""
        return self._heads[run]

    def __getitem__(self, run: str) -> m.RunResult:
        return self._unpacked.get(run, lambda r: _unpack_result(marshal.loads(zlib.decompress(self._packs[r]))))

    def __contains__(self, run: object) -> bool:
        return run in self._packs

    def __iter__(self) -> Iterator[str]:
        return iter(self._packs)

    def __len__(self) -> int:
        return len(self._packs)


def _pack_result(r: m.RunResult) -> tuple:
    return (r.run, r.scorer_version, r.matching_method, r.outcome,
            tuple((x.measure, x.state, x.passed, x.observed, x.failed, x.pending, x.dismissed) for x in r.measures),
            tuple((c.case_version, c.repetition, c.state, dict(c.measures)) for c in r.cases),
            tuple((o.measure, o.case_version, o.repetition, o.stage, o.subject, o.result, o.reason, o.detail) for o in r.observations),
            None if r.seal is None else (dict(r.seal.run), r.seal.setup_fingerprint,
                                         {k: dict(v) for k, v in r.seal.case_versions.items()}, dict(r.seal.pairs),
                                         {k: dict(v) for k, v in r.seal.answers.items()}))


def _unpack_result(t: tuple) -> m.RunResult:
    run, version, method, outcome, measures, cases, observations, seal = t
    return m.RunResult(run, version, method, outcome, tuple(m.MeasureResult(*x) for x in measures),
                       tuple(map(m.CaseResult._make, cases)), tuple(map(m.Observation._make, observations)),
                       None if seal is None else m.Seal(*seal))


def release(spool: Mapping, run: str) -> None:
    """Drop a run's unpacked copy from a spool (a plain mapping keeps none): a pass that is done with a run, and will not
    come back to it, keeps nothing of it, so a process scoring run after run holds one run unpacked, not the last few."""
    if isinstance(spool, (AnswerSpool, ResultSpool)):
        spool._unpacked.forget(run)


def each_run(results: Mapping[str, m.RunResult], runs: Iterable[str]) -> Iterator[tuple[str, m.RunResult | None]]:
    """Each run's result in turn (None when there is none), each let go once the next is asked for: a pass over the runs
    holds one of them unpacked."""
    for run in runs:
        yield run, results.get(run)
        release(results, run)


def answer_statuses(answers: Mapping[Key, m.Answer], run: str) -> Mapping[tuple[str, int], tuple[str, str | None]]:
    """Each of a run's answers' status and its rerun's (None without one): from the spool without unpacking, or from a plain mapping."""
    if isinstance(answers, AnswerSpool):
        return answers.statuses(run)
    return {(cv, rep): (a.answer.status, None if a.rerun is None else a.rerun.status)
            for (r, cv, rep), a in answers.items() if r == run}


def run_answers(answers: Mapping[Key, m.Answer], run: str) -> Mapping[tuple[str, int], m.Answer]:
    """One run's answers by (case version, repetition): the spool's unpacked run at once, or gathered from a plain mapping."""
    if isinstance(answers, AnswerSpool):
        return answers.of_run(run)
    return {(cv, rep): a for (r, cv, rep), a in answers.items() if r == run}
