"""The seven measures of METHOD.md, each a plain function from one judged run to its observations."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Iterator, Mapping, NamedTuple

from sitegen.core import model as m
from sitegen.score.matching import CaseContext, MatchingMethod, evidence, judge_stage


class Observed(NamedTuple):
    """One observation of one measure, passed ones included; `cases` says which (case version, repetition) it involves.

    A named tuple rather than a dataclass: a large run makes millions of these, and tuples are built several times faster.
    """

    measure: str
    case_version: str
    repetition: str
    stage: str
    subject: str
    result: str
    reason: str = ""
    detail: str = ""
    cases: tuple[tuple[str, int], ...] = ()
    quote: str | None = None  # QUOTE_FIDELITY: the collapsed quote, which identifies the observation across runs


class Passed(NamedTuple):
    """`count` observations that passed, each involving every case in `cases`: what scoring needs of them, in place of each one.

    Scoring a run only counts its passed observations, and most observations pass; a measure asked not to list them
    (listed=False) yields these instead, at most one per (case version, repetition) where it can.
    """

    count: int
    cases: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class JudgedRun:
    """A run's answers with every stage judged once, shared by all seven measures."""

    run: m.Run
    stages: tuple[str, ...]
    case_versions: tuple[m.CaseVersion, ...]
    pairs: tuple[m.Pair, ...]
    contexts: Mapping[str, CaseContext]
    answers: Mapping[tuple[str, int], m.Answer]
    verdicts: Mapping[tuple[str, int, str], m.StageVerdict]
    method: MatchingMethod
    rerun_verdict: Callable[[m.Answer, str], m.StageVerdict]


def judge_run(records: m.Records, run: m.Run, method: MatchingMethod) -> JudgedRun:
    suite = records.suite(run.suite, run.suite_version)
    case_versions = tuple(records.case_versions[cv] for cv in suite.case_versions)
    contexts = {cv.id: CaseContext(cv) for cv in case_versions}
    stages = records.stages(run)
    answers: dict[tuple[str, int], m.Answer] = {}
    verdicts: dict[tuple[str, int, str], m.StageVerdict] = {}
    for cv in case_versions:
        judged_before: dict[str, list[tuple[tuple[m.Finding, ...], m.StageVerdict]]] = {stage: [] for stage in stages}
        for rep in range(1, run.repetitions + 1):
            answer = records.answers[(run.id, cv.id, rep)]
            answers[(cv.id, rep)] = answer
            for stage in stages:
                findings = answer.answer.stage_findings(stage)
                verdict = _judged_before(judged_before[stage], findings)
                if verdict is None:
                    verdict = judge_stage(contexts[cv.id], findings, method)
                    judged_before[stage].append((findings, verdict))
                verdicts[(cv.id, rep, stage)] = verdict
    in_suite = set(suite.case_versions)
    pairs = tuple(p for p in records.pairs if p.versions[0] in in_suite and p.versions[1] in in_suite)

    def rerun_verdict(answer: m.Answer, stage: str) -> m.StageVerdict:
        return judge_stage(contexts[answer.case_version], answer.rerun.stage_findings(stage), method)

    return JudgedRun(run, stages, case_versions, pairs, contexts, answers, verdicts, method, rerun_verdict)


def _judged_before(judged: list[tuple[tuple[m.Finding, ...], m.StageVerdict]], findings: tuple[m.Finding, ...]) -> m.StageVerdict | None:
    """The verdict already made on equal findings (an engine often repeats itself), or None; findings are frozen values.

    The same verdict object then stands for every repetition that gave it, which the measures may use as a shortcut.
    Compared rather than hashed: a frozen dataclass's hash is computed anew each time, and unequal answers mostly differ early.
    """
    for before, verdict in judged:
        if before == findings:
            return verdict
    return None


def _cases(judged: JudgedRun) -> Iterator[tuple[m.CaseVersion, int]]:
    for cv in judged.case_versions:
        for rep in range(1, judged.run.repetitions + 1):
            yield cv, rep


_MISS_DETAIL = {
    "nothing": "nothing was reported for it",
    "kind": "the passage was reported in the other list (flaw/strength)",
    "rule": "the primary rule named is not one the key accepts",
    "rule.support": "an accepted rule was named only as a supporting rule, not as the primary rule",
    "missing": "the finding's missing flag differs from the key's",
    "evidence": "the rule was named but the finding does not point at the passage",
    "taken": "the only finding that matched it was assigned to another expected finding",
}


def _miss(verdict: m.ExpectedVerdict) -> str:
    text = _MISS_DETAIL[verdict.reason]
    return f"{text} (closest finding: {verdict.closest})" if verdict.closest else text


def grounding(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each expected finding, per stage and repetition; a first miss waits for its rerun (reviewer stage: reviewer-expected only)."""
    for cv, rep in _cases(judged):
        answer = judged.answers[(cv.id, rep)]
        repetition, cases = str(rep), ((cv.id, rep),)
        passed = 0
        for stage in judged.stages:
            rerun = None
            for ev in judged.verdicts[(cv.id, rep, stage)].expected:
                if stage == m.REVIEWER and not ev.expected.reviewer_expected:
                    continue
                if ev.finding is not None:
                    if listed:
                        # all fields by position: a large run makes millions of these, and keywords and defaults cost more than the tuple
                        yield Observed("GROUNDING", cv.id, repetition, stage, ev.expected.id, m.PASSED, "", "", cases, None)
                    else:
                        passed += 1
                    continue
                common = ("GROUNDING", cv.id, repetition, stage, ev.expected.id)
                if answer.rerun is None:
                    yield Observed(*common, m.PENDING, ev.reason, f"first miss, no rerun recorded: {_miss(ev)}", cases)
                    continue
                if answer.rerun.status != m.COMPLETED:
                    yield Observed(*common, m.PENDING, "rerun.crashed", "the rerun crashed before it finished", cases)
                    continue
                if rerun is None:
                    rerun = judged.rerun_verdict(answer, stage)
                again = next(r for r in rerun.expected if r.expected.id == ev.expected.id)
                if again.finding is not None:
                    yield Observed(*common, m.DISMISSED, ev.reason,
                                   f"first miss ({_miss(ev)}) dismissed by rerun: rerun finding {again.finding} matched", cases)
                else:
                    yield Observed(*common, m.FAILED, ev.reason, f"miss confirmed by rerun: {_miss(ev)}", cases)
        if passed:
            yield Passed(passed, cases)


def clean_case_flaws(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each stage of each repetition of a clean case version: no flaw may be reported."""
    for cv, rep in _cases(judged):
        if cv.clean:
            yield from _each_stage(judged, "CLEAN_CASE_FLAWS", cv, rep, _flaws_reported, listed)


def _flaws_reported(verdict: m.StageVerdict) -> tuple[str, str] | None:
    flaws = [v.finding.id for v in verdict.findings if v.finding.kind == m.FLAW]
    return ("flaw", f"{len(flaws)} flaw(s) reported on a clean case: {', '.join(flaws)}") if flaws else None


def prohibited_output(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each stage of each repetition of any case version: no prohibited finding of the key may occur."""
    for cv, rep in _cases(judged):
        yield from _each_stage(judged, "PROHIBITED_OUTPUT", cv, rep, _prohibited_found, listed)


def _prohibited_found(verdict: m.StageVerdict) -> tuple[str, str] | None:
    hits = [v for v in verdict.findings if v.category == m.PROHIBITED]
    return ("prohibited", ", ".join(f"{v.finding.id} matches prohibited {v.key_finding}" for v in hits)) if hits else None


def _each_stage(judged: JudgedRun, measure: str, cv: m.CaseVersion, rep: int, problem, listed: bool) -> Iterator[Observed | Passed]:
    """One observation per stage of a repetition: failed with (reason, detail) when `problem` finds one, else passed."""
    repetition, cases = str(rep), ((cv.id, rep),)
    passed = 0
    for stage in judged.stages:
        found = problem(judged.verdicts[(cv.id, rep, stage)])
        if found is not None:
            yield Observed(measure, cv.id, repetition, stage, "-", m.FAILED, *found, cases)
        elif listed:
            yield Observed(measure, cv.id, repetition, stage, "-", m.PASSED, "", "", cases, None)
        else:
            passed += 1
    if passed:
        yield Passed(passed, cases)


def quote_fidelity(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each quote the engine gave, in any finding of any stage: it must stand verbatim in the document."""
    for cv, rep in _cases(judged):
        ctx = judged.contexts[cv.id]
        repetition, cases = str(rep), ((cv.id, rep),)
        passed = 0
        for stage in judged.stages:
            for v in judged.verdicts[(cv.id, rep, stage)].findings:
                quote = v.finding.quote
                if quote is None:
                    continue
                if v.quote_found:
                    if listed:
                        yield Observed("QUOTE_FIDELITY", cv.id, repetition, stage, v.finding.id, m.PASSED, "", "", cases, ctx.collapsed(quote))
                    else:
                        passed += 1
                    continue
                common = ("QUOTE_FIDELITY", cv.id, repetition, stage, v.finding.id)
                if not quote.strip():
                    yield Observed(*common, m.FAILED, "quote.empty", "the quote is empty and cannot be checked", cases, ctx.collapsed(quote))
                else:
                    yield Observed(*common, m.FAILED, "quote.not-found", f"quote not in the document: \"{quote}\"", cases, ctx.collapsed(quote))
        if passed:
            yield Passed(passed, cases)


def reducer_survival(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each reviewer-expected finding that a reviewer reported or the merge produced: it must survive the merge unchanged."""
    if m.REPORT not in judged.stages:
        return
    for cv in judged.case_versions:
        ctx = judged.contexts[cv.id]
        seen: list[tuple[m.StageVerdict, m.StageVerdict, list]] = []  # verdicts of earlier repetitions, with their outcomes
        for rep in range(1, judged.run.repetitions + 1):
            reviewer = judged.verdicts[(cv.id, rep, m.REVIEWER)]
            report = judged.verdicts[(cv.id, rep, m.REPORT)]
            # a repetition that repeated an earlier one's answers has the very same verdicts, and so the same outcomes
            outcomes = next((o for before, after, o in seen if before is reviewer and after is report), None)
            if outcomes is None:
                outcomes = list(_survivals(ctx, reviewer, report, judged.method))
                seen.append((reviewer, report, outcomes))
            repetition, cases = str(rep), ((cv.id, rep),)
            passed = 0
            for subject, failure in outcomes:
                if failure is not None:
                    yield Observed("REDUCER_SURVIVAL", cv.id, repetition, m.REPORT, subject, m.FAILED, *failure, cases)
                elif listed:
                    yield Observed("REDUCER_SURVIVAL", cv.id, repetition, m.REPORT, subject, m.PASSED, "", "", cases, None)
                else:
                    passed += 1
            if passed:
                yield Passed(passed, cases)


def _survivals(ctx, reviewer: m.StageVerdict, report: m.StageVerdict, method) -> Iterator[tuple[str, tuple[str, str] | None]]:
    """(expected finding, None or why it did not survive) for each one a reviewer reported or the merge produced."""
    for rev_e, rep_e in zip(reviewer.expected, report.expected):
        target = rev_e.expected
        if not target.reviewer_expected:
            continue
        own = [v.finding for v in reviewer.findings if _owns(v, target.id, method)]
        if not own and rep_e.finding is None:
            continue
        yield target.id, _survival(ctx, own, rep_e, report, target, method)


def _owns(v: m.FindingVerdict, target: str, method: MatchingMethod) -> bool:
    """Whether a reviewer finding is the reviewer's own for an expected finding: assigned to it, or a duplicate of it.

    From scorer 7 a duplicate is the reviewer's own for every expected finding it duplicates; scorer 5 and 6 counted
    only the first of them in key order, and keep doing so for the runs they scored.
    """
    if v.category == m.MATCHED:
        return v.key_finding == target
    if v.category != m.DUPLICATE:
        return False
    return target in v.duplicate_of if method.survival_through_every_duplicate else v.key_finding == target


def _survival(ctx, own, rep_e, report, target, method) -> tuple[str, str] | None:
    if not own:
        return "added", f"the report has it (finding {rep_e.finding}) but no reviewer reported it, although a reviewer should have"
    if rep_e.finding is None:
        changed = _changed(ctx, own, report, target, method)
        if changed:
            return changed
        return "lost", f"reviewer finding {own[0].id} reported it, but the delivered report no longer matches it"
    delivered = next(v.finding for v in report.findings if v.finding.id == rep_e.finding)
    same_rule = [f for f in own if f.rule == delivered.rule]
    if not same_rule:
        return "changed.rule", f"report finding {delivered.id} names primary rule {delivered.rule}, the reviewer named {own[0].rule}"
    if target.kind == m.FLAW:
        traced = [f for f in same_rule if f.id in delivered.trace]
        if not traced:
            shown = ", ".join(delivered.trace) or "nothing"
            return "trace", f"report finding {delivered.id} is traced to {shown}, not to the reviewer's finding {same_rule[0].id}"
    return None


def _changed(ctx, own, report, target, method) -> tuple[str, str] | None:
    for v in report.findings:
        f = v.finding
        if evidence(ctx, f, target.passage, method) is None and not any(o.id in f.trace for o in own):
            continue
        if f.kind != target.kind:
            return "changed.kind", f"report finding {f.id} carries it as a {f.kind}, not a {target.kind}"
        if f.missing != target.missing:
            return "changed.missing", f"report finding {f.id} changed the missing flag to {str(f.missing).lower()}"
        if f.rule not in target.rules:
            return "changed.rule", f"report finding {f.id} names primary rule {f.rule}, which the key does not accept"
    return None


def _fate(judged: JudgedRun, cv_id: str, rep: int) -> dict[str, str]:
    """How each expected finding fared through the merge: kept, lost, changed, added or none."""
    reviewer = judged.verdicts[(cv_id, rep, m.REVIEWER)]
    report = judged.verdicts[(cv_id, rep, m.REPORT)]
    fates = {}
    for rev_e, rep_e in zip(reviewer.expected, report.expected):
        rule = next((v.finding.rule for v in report.findings if v.finding.id == rep_e.finding), None)
        if rev_e.finding and rep_e.finding:
            before = next(v.finding.rule for v in reviewer.findings if v.finding.id == rev_e.finding)
            fates[rev_e.expected.id] = "kept" if before == rule else "changed"
        elif rev_e.finding:
            fates[rev_e.expected.id] = "lost"
        elif rep_e.finding:
            fates[rev_e.expected.id] = "added"
        else:
            fates[rev_e.expected.id] = "none"
    return fates


def _reading(judged: JudgedRun, cv_id: str, rep: int) -> dict[str, object]:
    """What a pair comparison looks at for one version: matched expected findings with their rule, unexpected count, merge fate."""
    reading: dict[str, object] = {}
    for stage in judged.stages:
        verdict = judged.verdicts[(cv_id, rep, stage)]
        rules = {v.finding.id: v.finding for v in verdict.findings}
        for ev in verdict.expected:
            found = rules[ev.finding] if ev.finding else None
            reading[f"{stage}:{ev.expected.id}"] = (
                (found.kind, found.missing, found.rule) if found else "not found"
            )
        unexpected = [v.finding for v in verdict.findings if v.category == m.UNEXPECTED]
        if judged.method.unexpected_by_identity:
            # scorer 7 on: the multiset of (kind, primary rule, missing flag); quotes and locations differ with the documents
            reading[f"{stage}:unexpected"] = UnexpectedOutput(tuple(sorted((f.kind, f.rule, f.missing) for f in unexpected)))
        else:
            reading[f"{stage}:unexpected"] = len(unexpected)
    if m.REPORT in judged.stages:
        for expected_id, fate in _fate(judged, cv_id, rep).items():
            reading[f"merge:{expected_id}"] = fate
    return reading


def invariant_pairs(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each invariance pair (same rules) in each repetition: both versions must read alike."""
    stage = judged.stages[-1]
    for pair in judged.pairs:
        if not pair.compared:
            continue
        a, b = pair.versions
        for rep in range(1, judged.run.repetitions + 1):
            left, right = _reading(judged, a, rep), _reading(judged, b, rep)
            common = dict(measure="INVARIANT_PAIRS", case_version=a, repetition=str(rep), stage=stage, subject=pair.id,
                          cases=((a, rep), (b, rep)))
            keys = list(left) + [k for k in right if k not in left]  # reviewer stage first, then report, then merge
            differing = [k for k in keys if left.get(k, "not in key") != right.get(k, "not in key")]
            if not differing:
                yield Observed(result=m.PASSED, **common) if listed else Passed(1, common["cases"])
                continue
            first = differing[0]
            scope = first.split(":", 1)[0]
            common["stage"] = m.REVIEWER if scope == m.REVIEWER else m.REPORT
            yield Observed(result=m.FAILED, reason=_pair_reason(first, left.get(first)),
                           detail=f"{first}: {a} reads {_show(left.get(first, 'not in key'))}, "
                                  f"{b} reads {_show(right.get(first, 'not in key'))}"
                                  + (f" (+{len(differing) - 1} more difference(s))" if len(differing) > 1 else ""),
                           **common)


class UnexpectedOutput(NamedTuple):
    """One stage's unexpected findings as a pair compares them from scorer 7: sorted (kind, primary rule, missing flag)."""

    findings: tuple[tuple[str, str, bool], ...]

    def __str__(self) -> str:
        shown = ", ".join(f"{kind} {rule} (missing={str(missing).lower()})" for kind, rule, missing in self.findings)
        return f"unexpected [{shown}]" if shown else "no unexpected finding"


def _pair_reason(key: str, value: object) -> str:
    scope, _, what = key.partition(":")
    if scope == "merge":
        return "merge"
    if what == "unexpected":
        return "unexpected" if isinstance(value, UnexpectedOutput) else "count.unexpected"
    return "expected"


def _show(value: object) -> str:
    if isinstance(value, UnexpectedOutput):
        return str(value)
    if isinstance(value, tuple):
        kind, missing, rule = value
        return f"found as {kind} (missing={str(missing).lower()}, rule {rule})"
    return str(value)


def identical_input_stability(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each unordered pair of repetitions of one case version in one stage: same outcomes and counts."""
    repetitions = range(1, judged.run.repetitions + 1)
    for cv in judged.case_versions:
        for stage in judged.stages:
            verdicts = {rep: judged.verdicts[(cv.id, rep, stage)] for rep in repetitions}
            summaries: dict[int, dict[str, object]] = {}
            for i, j in combinations(repetitions, 2):
                common = ("IDENTICAL_INPUT_STABILITY", cv.id, f"{i}-{j}", stage, "-")
                cases = ((cv.id, i), (cv.id, j))
                if verdicts[i] is verdicts[j] or _summary_of(i, verdicts, summaries) == _summary_of(j, verdicts, summaries):
                    # equal answers are judged once, so nothing can differ; equal summaries are compared in one go
                    yield Observed(*common, m.PASSED, "", "", cases, None) if listed else Passed(1, cases)
                    continue
                left, right = summaries[i], summaries[j]
                differing = [k for k in left if left[k] != right[k]]
                first = differing[0]
                reason = "outcome" if first.startswith("expected:") else f"count.{first}"
                yield Observed(*common, m.FAILED, reason,
                               f"{first}: repetition {i} gives {left[first]}, repetition {j} gives {right[first]}"
                               + (f" (+{len(differing) - 1} more difference(s))" if len(differing) > 1 else ""),
                               cases)


def _summary_of(rep: int, verdicts: dict[int, m.StageVerdict], summaries: dict[int, dict[str, object]]) -> dict[str, object]:
    """The repetition's summary, made once and only when a comparison needs it."""
    if rep not in summaries:
        summaries[rep] = _summary(verdicts[rep])
    return summaries[rep]


def _summary(verdict: m.StageVerdict) -> dict[str, object]:
    summary: dict[str, object] = {f"expected:{ev.expected.id}": ("matched" if ev.finding else "missed") for ev in verdict.expected}
    flaws = strengths = unexpected = prohibited = 0
    for v in verdict.findings:
        if v.category == m.VOLUNTARY:
            continue  # voluntary strengths are left out
        flaws += v.finding.kind == m.FLAW
        strengths += v.finding.kind == m.STRENGTH
        unexpected += v.category == m.UNEXPECTED
        prohibited += v.category == m.PROHIBITED
    summary.update(flaws=flaws, strengths=strengths, unexpected=unexpected, prohibited=prohibited)
    return summary


MEASURE_FUNCTIONS = {
    "GROUNDING": grounding,
    "CLEAN_CASE_FLAWS": clean_case_flaws,
    "PROHIBITED_OUTPUT": prohibited_output,
    "QUOTE_FIDELITY": quote_fidelity,
    "REDUCER_SURVIVAL": reducer_survival,
    "INVARIANT_PAIRS": invariant_pairs,
    "IDENTICAL_INPUT_STABILITY": identical_input_stability,
}
assert tuple(MEASURE_FUNCTIONS) == m.MEASURES
