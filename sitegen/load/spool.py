"""A large publication's answers kept packed in memory, one run unpacked at a time, so memory does not grow with runs."""

from __future__ import annotations

import dataclasses
import hashlib
import marshal
import zlib
from collections import OrderedDict
from contextlib import nullcontext
from types import MappingProxyType
from typing import Callable, ContextManager, Iterable, Iterator, Mapping

from sitegen.core import model as m
from sitegen.load.answerpack import PackedRun, RawAnswer, pack_answers, unpack_run, unpack_statuses

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
        return unpack_statuses(self._packs.get(run, []))

    def _run(self, run: str) -> dict[tuple[str, int], m.Answer]:
        return self._unpacked.get(run, self._unpack)

    def _unpack(self, run: str) -> dict[tuple[str, int], m.Answer]:
        return unpack_run(run, self._packs[run])


class ResultSpool(Mapping[str, m.RunResult]):
    """Run results mapped by run id like a dict, packed the same way: at scale one run's results hold 30,000 case entries.

    A result's seal is packed apart from the rest, so a spool for pages (without_seals) never unpacks it.
    """

    def __init__(self, keep: int = 2, *, unpacking: Callable[[], ContextManager] = nullcontext):
        self._packs: dict[str, bytes] = {}
        self._heads: dict[str, tuple[str, tuple[m.MeasureResult, ...]]] = {}
        self._prints: dict[str, object] = {}
        self._digests: dict[str, str] = {}  # digest(run), once taken or kept with the pack
        self._unpacked = _Unpacked(keep, unpacking)
        self._sealed = True  # results unpacked with their seals (False: without_seals)

    def add(self, result: m.RunResult) -> None:
        body, seal = _pack_result(result)
        self._packs[result.run] = marshal.dumps((_compress(body), None if seal is None else _compress(seal)))
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
            body, seal = _unpack_parts(self._packs[run], sealed=True)
            self._digests[run] = hashlib.sha256(marshal.dumps((*body, seal), 0)).hexdigest()
        return self._digests[run]

    def without_seals(self) -> ResultSpool:
        """The same results, each unpacked with no seal (None): what pages read (a run page says whether a run is sealed
        from the site's facts). A seal holds a digest per answer (about 10 MiB a run at 10,000 case versions) that only
        the checks compare."""
        spool = ResultSpool(self._unpacked.keep, unpacking=self._unpacked.unpacking)
        spool._packs, spool._heads, spool._prints, spool._digests = (dict(self._packs), dict(self._heads), dict(self._prints),
                                                                     dict(self._digests))
        spool._sealed = False
        return spool

    def head(self, run: str) -> tuple[str, tuple[m.MeasureResult, ...]]:
        """A run's outcome and measures, kept unpacked: a summary line needs no more."""
        return self._heads[run]

    def __getitem__(self, run: str) -> m.RunResult:
        return self._unpacked.get(run, lambda r: _unpack_result(*_unpack_parts(self._packs[r], sealed=self._sealed)))

    def __contains__(self, run: object) -> bool:
        return run in self._packs

    def __iter__(self) -> Iterator[str]:
        return iter(self._packs)

    def __len__(self) -> int:
        return len(self._packs)


def _pack_result(r: m.RunResult) -> tuple[tuple, tuple | None]:
    """A result as plain values: all but its seal, and its seal (None when it has none)."""
    return ((r.run, r.scorer_version, r.matching_method, r.outcome,
             tuple((x.measure, x.state, x.passed, x.observed, x.failed, x.pending, x.dismissed) for x in r.measures),
             tuple((c.case_version, c.repetition, c.state, dict(c.measures)) for c in r.cases),
             tuple((o.measure, o.case_version, o.repetition, o.stage, o.subject, o.result, o.reason, o.detail) for o in r.observations)),
            None if r.seal is None else (dict(r.seal.run), r.seal.setup_fingerprint,
                                         {k: dict(v) for k, v in r.seal.case_versions.items()}, dict(r.seal.pairs),
                                         {k: dict(v) for k, v in r.seal.answers.items()}))


def _compress(values: tuple) -> bytes:
    return zlib.compress(marshal.dumps(values), 1)


def _unpack_parts(pack: bytes, *, sealed: bool) -> tuple[tuple, tuple | None]:
    """What _pack_result gave, from a pack; the seal None unless `sealed` (then it is not even decompressed)."""
    body, seal = marshal.loads(pack)
    return marshal.loads(zlib.decompress(body)), (marshal.loads(zlib.decompress(seal)) if sealed and seal is not None else None)


def _unpack_result(body: tuple, seal: tuple | None) -> m.RunResult:
    run, version, method, outcome, measures, cases, observations = body
    return m.RunResult(run, version, method, outcome, tuple(m.MeasureResult(*x) for x in measures),
                       tuple(map(m.CaseResult._make, cases)), tuple(map(m.Observation._make, observations)),
                       None if seal is None else m.Seal(*seal))


def without_seals(results: Mapping[str, m.RunResult]) -> Mapping[str, m.RunResult]:
    """The results with no seals, for pages: a spool's without_seals, or a plain mapping's results copied without."""
    if isinstance(results, ResultSpool):
        return results.without_seals()
    return {run: dataclasses.replace(result, seal=None) for run, result in results.items()}


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
