"""One scoring pass over the runs, serving build, check and `sitegen score` alike: score, verify against the record, compare."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from pathlib import Path
from typing import Callable, Collection, Iterator, Mapping

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic, PublicationError, UsageError, did_you_mean
from sitegen.core.workers import ordered_map
from sitegen.load.jsonread import parse_json
from sitegen.load.spool import ResultSpool, release
from sitegen.score.comparison import Comparison, compare_summaries, compatibility_key
from sitegen.score.compared import Compared, ComparedRuns
from sitegen.score.matching import PreparedCases
from sitegen.score.parts import observe_whole
from sitegen.score.results import (Difference, EntryPrint, compare_result, entry_print, not_canonical, read_results,
                                   results_pieces, write_results, writes_as)
from sitegen.score.scoring import score_run
from sitegen.score.seals import SealChange, case_digests, compare_seal, locate_seal_changes, seal_run
from sitegen.score.verified import Known, VerifiedRuns


@dataclass(frozen=True)
class PassRequest:
    """What one pass does; forked workers receive it whole (ordered_map's context), so nothing is held by a module."""

    records: m.Records
    recorded: Mapping[str, m.RunResult] | None  # when given, each fresh result is checked against it where it was scored
    compare: bool  # compare each run with the previous comparable one (this needs all of a run's observations)
    cases: Mapping[str, Mapping[str, str]] = field(default_factory=dict)  # case_digests shared by every run's seal check
    seal: bool = False  # seal each fresh published result where it was scored, while its answers are unpacked
    packed: bool = False  # keep the fresh results packed (a ResultSpool): at 10,000 case versions a run's are 45 MiB
    printed: bool = False  # with packed: each fresh result's record entry laid out where it was made, its EntryPrint kept

    @cached_property
    def prepared(self) -> PreparedCases:
        """Each case version prepared for matching once, for every run of the pass: derived from the records, made on
        first need (in each forked worker for its own runs, unless the pass made it before forking)."""
        return PreparedCases(self.records.case_versions)


@dataclass(frozen=True)
class Examined:
    """A fresh result checked against the record: whether the record has the run with the same scorer version, and
    if so where the two first differ (None: byte for byte the same). Only this travels back, not the result."""

    comparable: bool
    difference: Difference | None
    seal_changes: tuple[SealChange, ...] = ()  # sealed inputs whose digest differs now (none when not sealed)


@dataclass(frozen=True)
class RunScored:
    """One run of a pass: its fresh result (without a record to check against) or what checking it found, and the
    summary a comparison needs (None when not comparing, or for a CRASHED run)."""

    run: m.Run
    result: m.RunResult | None
    examined: Examined | None
    summary: Mapping | None
    reasons: bytes | None = None  # when comparing: the structured reasons of its observations, packed (score/reasons.py)
    packed: tuple | None = None  # with a packed pass, the fresh result as ResultSpool.pack made it, in place of `result`
    laid_out: EntryPrint | None = None  # with a printed pass, the EntryPrint of the fresh result's entry


@dataclass(frozen=True)
class Verified:
    """A pass's outcome: fresh results (only without a record), differences from the record, and the comparisons."""

    results: Mapping[str, m.RunResult]
    differences: Mapping[str, Difference | None]
    comparisons: Mapping[str, Comparison]
    seal_changes: Mapping[str, tuple[SealChange, ...]] = field(default_factory=dict)
    reasons: Mapping[str, bytes] = field(default_factory=dict)  # run id -> its reasons, packed, for the pages


def score_pass(request: PassRequest, runs: tuple[m.Run, ...], *, jobs: int = 1, keep_all_changes: bool = True,
               known: Mapping[str, Known] | None = None, reproduced: Callable[[m.Run, Known], None] | None = None,
               compared: Compared | None = None, here: bool = False) -> Verified:
    """Score the runs once, in date order, one run's observations alive at a time (N processes, same result for any N).

    Only the latest run of each compatibility key keeps its summary, so memory holds a few runs' summaries, not all.
    Without `keep_all_changes`, each comparison keeps only its regressions (the other changes are never built).
    With a record to check against, the runs in `known` (verified.py: their inputs and entry verified before) are not
    scored again: they reproduce, with the summary and reasons they had; each run scored that reproduces its entry, seal
    included, is handed to `reproduced` as it comes, so it can be known next time. With `compared`, a comparison made
    before of the same two runs' inputs is taken from it, and one made afresh is handed to it. With `here`, this process
    scores runs too and forks one worker fewer (ordered_map): less memory, where the caller has little else to do.
    """
    known = known if request.recorded is not None and known else {}
    results: dict[str, m.RunResult] | ResultSpool = ResultSpool() if request.packed else {}
    differences: dict[str, Difference | None] = {}
    comparisons: dict[str, Comparison] = {}
    seal_changes: dict[str, tuple[SealChange, ...]] = {}
    reasons: dict[str, bytes] = {}
    latest: dict[tuple, tuple[m.Run, Mapping]] = {}
    records = request.records
    ordered = sorted(runs, key=lambda r: (r.date, r.id))
    fresh = iter(_scored(request, [r for r in ordered if r.id not in known], jobs, here))
    for run in ordered:
        if run.id in known:
            scored = RunScored(run, None, Examined(True, None), known[run.id].summary, known[run.id].reasons)
        else:
            scored = next(fresh)
            examined = scored.examined
            if reproduced is not None and examined is not None and examined.comparable and examined.difference is None \
                    and not examined.seal_changes:
                reproduced(run, Known(scored.summary, scored.reasons))
        if scored.packed is not None:
            results.add_packed(*scored.packed)
            if scored.laid_out is not None:
                results.add_print(run.id, scored.laid_out)
        elif scored.result is not None:
            if request.packed:
                results.add(scored.result)
            else:
                results[run.id] = scored.result
        if scored.examined is not None and scored.examined.comparable:
            differences[run.id] = scored.examined.difference
            if scored.examined.seal_changes:
                seal_changes[run.id] = scored.examined.seal_changes
        if scored.reasons is not None:
            reasons[run.id] = scored.reasons
        if scored.summary is None:
            continue
        key = compatibility_key(records, run)
        if key in latest:
            previous, seen = latest[key]
            comparison = compared.get(previous, run) if compared is not None else None
            if comparison is None:
                comparison = compare_summaries(records, previous, run, seen, scored.summary, regressions_only=not keep_all_changes)
                if compared is not None:
                    compared.put(previous, run, comparison)
            comparisons[run.id] = comparison
        latest[key] = (run, scored.summary)
    return Verified(results, differences, comparisons, seal_changes, reasons)


def _case_versions_of(records: m.Records, runs) -> list[str]:
    """The case versions of the suites these runs were scored against, sorted: what their seals take digests of."""
    return sorted({cv for run in runs for cv in records.suite(run.suite, run.suite_version).case_versions})


def verify_published(records: m.Records, recorded: Mapping[str, m.RunResult], *, jobs: int = 1,
                     keep_all_changes: bool = False, cache: VerifiedRuns | None = None,
                     comparisons: ComparedRuns | None = None) -> Verified:
    """Score every published run, check it against the record and compare it; raise PublicationError on any problem.

    With `cache`, a run whose every input and recorded entry were verified before is not scored again (verified.py);
    with `comparisons` as well, two runs whose inputs were compared before are not compared again (compared.py).
    """
    comparisons = comparisons if cache is not None else None  # a comparison is keyed by both runs' verification keys
    keys = {run.id: cache.key(records, recorded, run) for run in records.published_runs} if cache is not None else {}
    known = {run_id: found for run_id, key in keys.items() if (found := cache.get(key)) is not None} if cache is not None else {}
    to_score = [r for r in records.published_runs if r.id not in known]
    cases = case_digests(records, _case_versions_of(records, to_score)) if to_score else {}
    verified = score_pass(PassRequest(records, recorded, compare=True, cases=cases), records.published_runs, jobs=jobs,
                          keep_all_changes=keep_all_changes, known=known,
                          reproduced=(lambda run, found: cache.put(keys[run.id], found)) if cache is not None else None,
                          compared=Compared(records, keys, comparisons, regressions_only=not keep_all_changes)
                          if comparisons is not None else None, here=True)
    _raise_problems(records, recorded, verified.differences, verified.seal_changes, known=known.keys())
    return verified


def score_runs(records: m.Records, run_ids: tuple[str, ...], *, jobs: int = 1, sealed: bool = False,
               packed: bool = False, printed: bool = False) -> Mapping[str, m.RunResult]:
    """Fresh results of the named runs, in the order named (memory holds results, never more than one run's observations).

    With `sealed`, each published run's result carries its seal as the records stand, taken right after scoring it, so
    its answers are not unpacked a second time for the seal (and with `jobs`, in the worker that scored it). With
    `sealed` or `packed`, the results are kept packed as they come (a ResultSpool, in the order scored), so memory holds
    about one run's unpacked whatever the number of runs; each is packed where it was scored (with `jobs`, in the
    worker), so only its packed bytes travel. With `printed` as well, each entry's EntryPrint is kept with it, so
    writes_as checks a record without laying the runs out again.
    """
    runs = tuple(records.run(r) for r in run_ids)
    cases = case_digests(records, _case_versions_of(records, [r for r in runs if r.published])) if sealed else {}
    packed = packed or sealed
    request = PassRequest(records, None, compare=False, cases=cases, seal=sealed, packed=packed, printed=packed and printed)
    fresh = score_pass(request, runs, jobs=jobs).results
    if packed:
        return fresh
    return {run_id: fresh[run_id] for run_id in run_ids}


def _scored(request: PassRequest, runs: list[m.Run], jobs: int, here: bool) -> Iterator[RunScored]:
    if jobs <= 1 or len(runs) <= 1:
        return (_score_one(request, run.id) for run in runs)
    return ordered_map(_score_one, [r.id for r in runs], jobs=jobs, context=request, here=here)


def _score_one(request: PassRequest, run_id: str) -> RunScored:
    """One run, observed once: its result (or what checking it found) and, when comparing, the summary; the pass is done
    with the run after this, so neither its answers nor its recorded result stay unpacked (at 10,000 case versions the
    two runs the spools would keep came to about 150 MiB in each scoring process)."""
    try:
        return _scored_run(request, run_id)
    finally:
        release(request.records.answers, run_id)
        if request.recorded is not None:
            release(request.recorded, run_id)


def _scored_run(request: PassRequest, run_id: str) -> RunScored:
    records = request.records
    run = records.run(run_id)
    if request.compare:
        result, summary, reasons = observe_whole(records, run_id, request.prepared)
    else:
        result, summary, reasons = score_run(records, run_id, prepared=request.prepared), None, None
        if request.seal and run.published:
            result = replace(result, seal=seal_run(records, run_id, cases=request.cases))
    if request.recorded is None and request.packed:
        return RunScored(run, None, None, summary, reasons, ResultSpool.pack(result),
                         entry_print(result) if request.printed else None)
    if request.recorded is None:
        return RunScored(run, result, None, summary, reasons)
    return RunScored(run, None, _examine(request, result), summary, reasons)


def _examine(request: PassRequest, result: m.RunResult) -> Examined:
    kept = request.recorded.get(result.run)
    if kept is None or kept.scorer_version != result.scorer_version:
        return Examined(False, None)
    changes = () if kept.seal is None else compare_seal(kept.seal, seal_run(request.records, result.run, cases=request.cases))
    return Examined(True, compare_result(kept, result), changes)


def _locator(records: m.Records) -> Callable[[str | None, str, str], Diagnostic]:
    """A diagnostic placed in the results record by file, line and column of a pointer, as every record problem is."""
    source = records.files.get("results.json")
    path = source.path if source else "results.json"
    parsed: list = []  # the record is parsed again for line numbers only when there is a problem to place

    def at(pointer: str | None, message: str, code: str) -> Diagnostic:
        if pointer is not None and records.results_json is not None:
            if not parsed:
                parsed.append(parse_json(path, records.results_json)[0])
            if parsed[0] is not None:
                return parsed[0].diagnostic(pointer, message, code)
        return Diagnostic(path, None, None, pointer, message, code)

    return at


def _raise_problems(records: m.Records, recorded: Mapping[str, m.RunResult], differences: Mapping[str, Difference | None],
                    seal_changes: Mapping[str, tuple[SealChange, ...]], known: Collection[str] = ()) -> None:
    at = _locator(records)
    problems = locate_seal_changes(records, seal_changes)
    index = {run_id: i for i, run_id in enumerate(recorded)}
    for run in records.published_runs:
        if run.id not in recorded:
            problems.append(at(None, f"published run {run.id} has no results; run `sitegen score {run.id}`", "results.missing-run"))
            continue
        # a run scored now was comparable (in `differences`) exactly when the record names its scorer version (_examine):
        # so no recorded result is unpacked only to read its version, unless to say which one it names
        if run.id not in known and run.id not in differences:
            problems.append(at(f"/runs/{index[run.id]}/scorer_version",
                               f"run {run.id} was scored with scorer v{recorded[run.id].scorer_version}, but runs.json names "
                               f"v{run.scorer_version}", "results.scorer-version"))
            continue
        difference = differences.get(run.id)
        if difference is not None:
            problems.append(at(f"/runs/{index[run.id]}{difference.pointer}",
                               f"recorded results of run {run.id} differ from a fresh scoring: recorded {difference.recorded}, "
                               f"fresh {difference.fresh}", "results.stale"))
    known = {r.id for r in records.published_runs}
    for run_id in recorded:
        if run_id not in known:
            problems.append(at(f"/runs/{index[run_id]}/run", f"results for {run_id}, which is not a published run in runs.json",
                               "results.unknown-run"))
    if problems:
        raise PublicationError(problems)


@dataclass(frozen=True)
class ScoreReport:
    lines: tuple[str, ...]


def score_into_record(records: m.Records, root, *, run_ids: tuple[str, ...] | None, jobs: int = 1,
                      seal: bool = False) -> ScoreReport:
    """Add newly scored runs to results.json, each sealed; a run already there must reproduce byte for byte, and its seal
    must still hold, or nothing is written. With `seal`, a recorded run without a seal that reproduces gets one: the only
    change ever made to a recorded entry, asked for by name."""
    known = {r.id: r for r in records.runs}
    if run_ids is None:
        run_ids = tuple(r.id for r in records.published_runs)
    unknown = [r for r in run_ids if r not in known]
    if unknown:
        raise UsageError("unknown run(s): " + ", ".join(f'"{r}"{did_you_mean(r, known)}' for r in unknown))
    source = records.files.get("results.json")
    # a published run's seal as the records stand now; with a record to check, each entry's print taken where scored
    fresh = score_runs(records, tuple(run_ids), jobs=jobs, sealed=True, printed=source is not None)
    published = {r.id for r in records.published_runs}
    # the record is canonical JSON, so it reproduces byte for byte, every seal holding, exactly when its bytes are those
    # of the fresh results sealed with today's inputs: then nothing needs reading, comparing or writing (any other bytes,
    # an unsealed entry's among them, go through the reading below, which says why)
    seals: dict[str, m.Seal] = {}
    cases: dict[str, dict[str, str]] = {}

    def sealed_now(run_id: str) -> m.Seal:
        """A run's seal as the records stand, made once however often it is asked for, the case digests once for all."""
        if fresh[run_id].seal is not None:
            return fresh[run_id].seal
        if not cases:
            cases.update(case_digests(records, _case_versions_of(records, [records.run(r) for r in run_ids])))
        if run_id not in seals:
            seals[run_id] = seal_run(records, run_id, cases=cases)
        return seals[run_id]

    if source is not None and all(r in published for r in run_ids):
        # every fresh result carries its seal and its entry's print (length and SHA-256, taken where it was scored): the
        # record's bytes are checked against those, no run unpacked or laid out again
        if writes_as(fresh, source.data):
            return ScoreReport(tuple(f"{run_id}: {_summary(*fresh.head(run_id))} (reproduces the record; sealed)" for run_id in run_ids))
    recorded = read_results(source.data, path=source.path) if source is not None else {}
    lines: list[str] = []
    problems: list[Diagnostic] = []
    seal_changes: dict[str, tuple[SealChange, ...]] = {}
    # the record as it will be written, kept packed run by run like the fresh results: at 10,000 case versions ten runs'
    # results unpacked at once would take over 1 GB
    updated = ResultSpool()
    for run_id in recorded:
        updated.adopt(recorded, run_id)
    changed = False
    at = _locator(records)
    index = {run_id: i for i, run_id in enumerate(recorded)}
    for run_id in run_ids:
        run, result = known[run_id], fresh[run_id]
        summary = _summary(result.outcome, result.measures)
        if not run.published:
            lines.append(f"{run_id}: {summary} (not published: not written to results.json)")
            continue
        if run_id in recorded:
            kept = recorded[run_id]
            difference = compare_result(kept, result)
            if difference is not None:
                problems.append(replace(at(f"/runs/{index[run_id]}{difference.pointer}", f"scoring run {run_id} again does not "
                                           "reproduce its recorded results; nothing was written", "results.stale"),
                                        detail=difference.diff))
                continue
            if kept.seal is not None:
                changes = compare_seal(kept.seal, sealed_now(run_id))
                if changes:
                    seal_changes[run_id] = changes
                    continue
                lines.append(f"{run_id}: {summary} (reproduces the record; sealed)")
            elif seal:
                updated.add(replace(kept, seal=sealed_now(run_id)))
                changed = True
                lines.append(f"{run_id}: {summary} (reproduces the record; sealed now)")
            else:
                lines.append(f"{run_id}: {summary} (reproduces the record; not sealed: `sitegen score --seal {run_id}` seals it)")
        else:
            # score_runs sealed it already (sealed=True), so it is taken as packed there
            updated.adopt(fresh, run_id)
            changed = True
            lines.append(f"{run_id}: {summary} (added, sealed)")
    problems = locate_seal_changes(records, seal_changes) + problems
    # the record must be in the bytes sitegen writes: compared piece by piece, the whole canonical record is made only to
    # say where it differs
    if source is not None and not writes_as(recorded, source.data):
        problems.append(not_canonical(source.path, source.data, write_results(recorded)))
    if problems:
        raise PublicationError(problems)
    if source is None or changed:  # else the record's bytes are already those sitegen writes (checked above)
        _write_record(Path(root) / "results.json", updated)
    return ScoreReport(tuple(lines))


def _write_record(target: Path, results: ResultSpool) -> None:
    """Write the results record run by run into a temporary file that then replaces it: at 10,000 case versions the
    record is 270 MB, which need not be held in memory once, let alone twice (its pieces and their join)."""
    temporary = target.with_name(".results.json.tmp")
    try:
        with temporary.open("wb") as out:
            for piece in results_pieces(results):
                out.write(piece)
        temporary.replace(target)
    finally:
        temporary.unlink(missing_ok=True)


def _summary(outcome: str, measures: tuple[m.MeasureResult, ...]) -> str:
    if outcome == m.CRASHED_STATE:
        return "CRASHED (no numbers)"
    parts = [f"{x.measure} {x.passed} of {x.observed}" if x.observed else f"{x.measure} not observed" for x in measures]
    return f"{outcome}; " + ", ".join(parts)
