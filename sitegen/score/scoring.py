"""Scores one run at a time into a frozen RunResult: measure states, per-case results, and every observation that did not plainly pass."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from itertools import repeat
from operator import add, itemgetter, sub

from sitegen.core import model as m
from sitegen.load.spool import run_answers
from sitegen.score.matching import CaseContext, MatchingMethod, PreparedCases, judge_stage, method_for
from sitegen.score.measures.base import Observed, Passed, case_order, judge_run
from sitegen.score.measures.registry import MEASURE_FUNCTIONS, MEASURES


def run_crashed(records: m.Records, run: m.Run) -> bool:
    """A run is CRASHED when it, one of its answers, or a rerun that followed failed before the pipeline finished."""
    if run.status != m.COMPLETED:
        return True
    suite = records.suite(run.suite, run.suite_version)
    answers = run_answers(records.answers, run.id)
    for cv in suite.case_versions:
        for rep in range(1, run.repetitions + 1):
            a = answers[(cv, rep)]
            if a.answer.status != m.COMPLETED or (a.rerun is not None and a.rerun.status != m.COMPLETED):
                return True
    return False


def measure_state(passed: int, observed: int, failed: int, pending: int) -> str:
    if observed == 0:
        return m.NOT_OBSERVED
    if failed:
        return m.BLOCK
    if pending:
        return m.PENDING_CONFIRMATION
    return m.PASS


def run_outcome(states: list[str]) -> str:
    if m.BLOCK in states:
        return m.BLOCK
    if m.PENDING_CONFIRMATION in states:
        return m.PENDING_CONFIRMATION
    if all(s == m.NOT_OBSERVED for s in states):
        return m.NOT_OBSERVED
    return m.PASS


def score_run(records: m.Records, run_id: str, *, scorer_version: int | None = None,
              prepared: PreparedCases | None = None) -> m.RunResult:
    """Score a run with the scorer version it names (or the one given), exactly as METHOD.md says.

    `prepared` is the pass's preparation of the case versions, shared between the runs it scores (made afresh if not given).
    """
    run = records.run(run_id)
    version = scorer_version if scorer_version is not None else run.scorer_version
    method = method_for(version)
    if run_crashed(records, run):
        return crashed_result(run, version, method.id)
    return _score(records, run, version, method, prepared)


def crashed_result(run: m.Run, version: int, method_id: str) -> m.RunResult:
    """A CRASHED run's result: no measures, no cases, no observations."""
    return m.RunResult(run.id, version, method_id, m.CRASHED_STATE, (), (), ())


def _score(records: m.Records, run: m.Run, version: int, method: MatchingMethod, prepared: PreparedCases | None) -> m.RunResult:
    judged = judge_run(records, run, method, prepared)
    # each measure's observations are counted as they are made, so none is kept that did not fail; passed ones come counted
    streams = {measure: function(judged, listed=False) for measure, function in MEASURE_FUNCTIONS.items()}
    return _aggregate(run, version, method.id, judged.case_versions, streams)


def observe(judged) -> dict[str, list[Observed]]:
    """Every observation of every measure, passed ones included, in measure order."""
    return {measure: list(function(judged)) for measure, function in MEASURE_FUNCTIONS.items()}


def observe_run(records: m.Records, run_id: str, prepared: PreparedCases | None = None) -> dict[str, list[Observed]] | None:
    """All observations of a run with its own scorer version, or None for a CRASHED run."""
    run = records.run(run_id)
    if run_crashed(records, run):
        return None
    return observe(judge_run(records, run, method_for(run.scorer_version), prepared))


def aggregate_observed(records: m.Records, run_id: str, observed: dict[str, list[Observed]]) -> m.RunResult:
    """The RunResult of observations already made (by observe_run), so a run need not be scored twice."""
    run = records.run(run_id)
    suite = records.suite(run.suite, run.suite_version)
    return _aggregate(run, run.scorer_version, m.MATCHING_METHODS[run.scorer_version],
                      tuple(records.case_versions[cv] for cv in suite.case_versions), observed)


def aggregate_part(run: m.Run, version: int, method_id: str, case_versions: tuple[m.CaseVersion, ...],
                   observed: Mapping[str, Iterable[Observed]]) -> m.RunResult:
    """The RunResult of a part of a run's case versions (parts.py), from all its observations: merge_results joins the parts."""
    return _aggregate(run, version, method_id, case_versions, observed)


def merge_results(run: m.Run, version: int, method_id: str, order: tuple[str, ...], parts: list[m.RunResult]) -> m.RunResult:
    """The RunResult of a run from those of parts of its case versions (`order`: the suite's), as if scored whole: each
    measure's counts added up and its state found from the sums, cases in slot order, observations in the record's order."""
    at = {cv: i for i, cv in enumerate(order)}
    measures = []
    for same in zip(*(part.measures for part in parts)):
        passed, observed, failed, pending, dismissed = (sum(column) for column in zip(
            *((x.passed, x.observed, x.failed, x.pending, x.dismissed) for x in same)))
        measures.append(m.MeasureResult(same[0].measure, measure_state(passed, observed, failed, pending),
                                        passed, observed, failed, pending, dismissed))
    cases = sorted((case for part in parts for case in part.cases), key=lambda case: at[case.case_version])
    observations = sorted((o for part in parts for o in part.observations), key=_record_order)
    return m.RunResult(run.id, version, method_id, run_outcome([x.state for x in measures]), tuple(measures), tuple(cases),
                       tuple(observations))


def _aggregate(run: m.Run, version: int, method_id: str, case_versions, observed: Mapping[str, Iterable[Observed | Passed]]) -> m.RunResult:
    """Counts per measure and per case, and the observations that did not plainly pass; each observation is looked at once.

    Cases are counted by their slot in the run (base.case_order), in plain lists: a measure's passed observations come
    counted per slot already (Passed), and are added to its list in one go.
    """
    order = case_order(case_versions, run.repetitions)
    slot_index = {case: i for i, case in enumerate(order)}.__getitem__
    measures = []
    kept: list[tuple[tuple, m.Observation]] = []  # (the record's order, observation) of those that did not plainly pass
    # per measure, how many observations each slot took part in, and how many of those did not pass
    involved: dict[str, list[int]] = {}
    not_passed: dict[str, list[int]] = {}
    failed_slots: set[int] = set()  # a case with a failed observation is BLOCK, else with a pending one PENDING
    pending_slots: set[int] = set()
    repetition_order: dict[str, tuple[int, ...]] = {}
    for measure, items in observed.items():
        counts = {m.PASSED: 0, m.FAILED: 0, m.PENDING: 0, m.DISMISSED: 0}
        plainly_passed = 0
        taking_part = [0] * len(order)
        failing = [0] * len(order)
        measure_at = _MEASURE_ORDER[measure]
        for obs in items:
            if type(obs) is Passed:
                plainly_passed += obs.count
                taking_part = list(map(add, taking_part, obs.involved))
                continue
            result = obs[5]
            counts[result] += 1
            slots = list(map(slot_index, obs[8]))
            for i in slots:
                taking_part[i] += 1
            if result == m.PASSED:
                continue
            if result != m.DISMISSED:
                for i in slots:
                    failing[i] += 1
                (failed_slots if result == m.FAILED else pending_slots).update(slots)
            repetition = obs[2]
            rep_key = repetition_order.get(repetition)
            if rep_key is None:
                rep_key = repetition_order[repetition] = _rep_key(repetition)
            kept.append(((measure_at, obs[1], rep_key, _STAGE_ORDER[obs[3]], obs[4], obs[6]),  # as _record_order
                         _new(_Observation, obs[:_PUBLIC_FIELDS])))  # by position: an Observed begins with its fields
        involved[measure], not_passed[measure] = taking_part, failing
        counts[m.PASSED] += plainly_passed
        total = sum(counts.values())
        passed = counts[m.PASSED] + counts[m.DISMISSED]
        measures.append(m.MeasureResult(
            measure, measure_state(passed, total, counts[m.FAILED], counts[m.PENDING]),
            passed, total, counts[m.FAILED], counts[m.PENDING], counts[m.DISMISSED],
        ))
    names = sorted(observed)  # a case lists its measures by name
    # per slot, each measure's count of observations it took part in, and of those that passed: the columns read across
    takings = zip(*[involved[measure] for measure in names]) if names else repeat(())
    passings = zip(*[list(map(sub, involved[measure], not_passed[measure])) for measure in names]) if names else repeat(())
    cases = []
    for i, (cv_id, rep), taking, passing in zip(range(len(order)), order, takings, passings):
        tallies = {measure: (p, t) for measure, t, p in zip(names, taking, passing) if t}
        state = (m.BLOCK if i in failed_slots else m.PENDING_CONFIRMATION if i in pending_slots
                 else m.PASS if tallies else m.NOT_OBSERVED)
        cases.append(_new(_CaseResult, (cv_id, rep, state, tallies)))
    kept.sort(key=_first)
    return m.RunResult(run.id, version, method_id, run_outcome([x.state for x in measures]), tuple(measures), tuple(cases),
                       tuple([o for _, o in kept]))


_MEASURE_ORDER = {name: i for i, name in enumerate(MEASURES)}
_STAGE_ORDER = {stage: i for i, stage in enumerate(m.STAGES)}
_first = itemgetter(0)


def _rep_key(repetition: str) -> tuple[int, ...]:
    return tuple(map(int, repetition.split("-")))


def _record_order(obs: m.Observation) -> tuple:
    """The results record's order of observations: measure, case version, repetition, stage, subject, reason."""
    return (_MEASURE_ORDER[obs.measure], obs.case_version, _rep_key(obs.repetition), _STAGE_ORDER[obs.stage], obs.subject,
            obs.reason)


_PUBLIC_FIELDS = len(m.Observation._fields)
_new, _Observation, _CaseResult = tuple.__new__, m.Observation, m.CaseResult  # made from their fields in order (checked here)
assert Observed._fields[:_PUBLIC_FIELDS] == m.Observation._fields
assert m.CaseResult._fields == ("case_version", "repetition", "state", "measures")


def verdict_source(records: m.Records):
    """How findings fared, per answer and stage, computed on demand with the case version at hand prepared once.

    The verdicts of the case version at hand are kept by the engine answer's value (with the stage and scorer
    version): judging is a function of the case, the findings and the matching method alone, so an engine that
    repeats itself is judged once, and the kept verdict is the one judging again would give. Equal answers come back
    from the spool as the very same object, so a kept one is found by identity before its fields are compared.
    """
    runs = {r.id: r for r in records.runs}
    judged: dict[tuple[m.EngineAnswer, str, int], m.StageVerdict] = {}  # only the case version at hand
    at_hand: list = [None, None]  # the case version at hand and its CaseContext

    def verdict(answer: m.Answer, stage: str, rerun: bool = False) -> m.StageVerdict:
        if answer.case_version != at_hand[0]:  # pages take case versions one at a time: keep nothing of the one before
            judged.clear()
            at_hand[:] = [answer.case_version, CaseContext(records.case_versions[answer.case_version])]
        engine = answer.rerun if rerun else answer.answer
        version = runs[answer.run].scorer_version
        key = (engine, stage, version)
        kept = judged.get(key)
        if kept is not None:
            return kept
        found = judged[key] = judge_stage(at_hand[1], engine.stage_findings(stage), method_for(version))
        return found

    return verdict
