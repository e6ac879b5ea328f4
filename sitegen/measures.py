"""The seven measures of METHOD.md, each a plain function from one judged run to its observations."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import combinations
from typing import Callable, Iterator, Mapping, NamedTuple

from . import model as m
from .matching import CaseContext, MatchingMethod, evidence, judge_stage
from .text import collapse


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
        for rep in range(1, run.repetitions + 1):
            answer = records.answers[(run.id, cv.id, rep)]
            answers[(cv.id, rep)] = answer
            for stage in stages:
                verdicts[(cv.id, rep, stage)] = judge_stage(contexts[cv.id], answer.answer.stage_findings(stage), method)
    in_suite = set(suite.case_versions)
    pairs = tuple(p for p in records.pairs if p.versions[0] in in_suite and p.versions[1] in in_suite)

    def rerun_verdict(answer: m.Answer, stage: str) -> m.StageVerdict:
        return judge_stage(contexts[answer.case_version], answer.rerun.stage_findings(stage), method)

    return JudgedRun(run, stages, case_versions, pairs, contexts, answers, verdicts, method, rerun_verdict)


def _iter(judged: JudgedRun) -> Iterator[tuple[m.CaseVersion, int, str, m.StageVerdict]]:
    for cv in judged.case_versions:
        for rep in range(1, judged.run.repetitions + 1):
            for stage in judged.stages:
                yield cv, rep, stage, judged.verdicts[(cv.id, rep, stage)]


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


def grounding(judged: JudgedRun) -> Iterator[Observed]:
    """Each expected finding, per stage and repetition; a first miss waits for its rerun (reviewer stage: reviewer-expected only)."""
    for cv, rep, stage, verdict in _iter(judged):
        answer = judged.answers[(cv.id, rep)]
        rerun = None
        for ev in verdict.expected:
            if stage == m.REVIEWER and not ev.expected.reviewer_expected:
                continue
            common = dict(measure="GROUNDING", case_version=cv.id, repetition=str(rep), stage=stage,
                          subject=ev.expected.id, cases=((cv.id, rep),))
            if ev.finding is not None:
                yield Observed(result=m.PASSED, **common)
                continue
            if answer.rerun is None:
                yield Observed(result=m.PENDING, reason=ev.reason, detail=f"first miss, no rerun recorded: {_miss(ev)}", **common)
                continue
            if answer.rerun.status != m.COMPLETED:
                yield Observed(result=m.PENDING, reason="rerun.crashed", detail="the rerun crashed before it finished", **common)
                continue
            if rerun is None:
                rerun = judged.rerun_verdict(answer, stage)
            again = next(r for r in rerun.expected if r.expected.id == ev.expected.id)
            if again.finding is not None:
                yield Observed(result=m.DISMISSED, reason=ev.reason,
                               detail=f"first miss ({_miss(ev)}) dismissed by rerun: rerun finding {again.finding} matched", **common)
            else:
                yield Observed(result=m.FAILED, reason=ev.reason, detail=f"miss confirmed by rerun: {_miss(ev)}", **common)


def clean_case_flaws(judged: JudgedRun) -> Iterator[Observed]:
    """Each stage of each repetition of a clean case version: no flaw may be reported."""
    for cv, rep, stage, verdict in _iter(judged):
        if not cv.clean:
            continue
        flaws = [v.finding.id for v in verdict.findings if v.finding.kind == m.FLAW]
        common = dict(measure="CLEAN_CASE_FLAWS", case_version=cv.id, repetition=str(rep), stage=stage, cases=((cv.id, rep),))
        if flaws:
            yield Observed(subject="-", result=m.FAILED, reason="flaw",
                           detail=f"{len(flaws)} flaw(s) reported on a clean case: {', '.join(flaws)}", **common)
        else:
            yield Observed(subject="-", result=m.PASSED, **common)


def prohibited_output(judged: JudgedRun) -> Iterator[Observed]:
    """Each stage of each repetition of any case version: no prohibited finding of the key may occur."""
    for cv, rep, stage, verdict in _iter(judged):
        hits = [v for v in verdict.findings if v.category == m.PROHIBITED]
        common = dict(measure="PROHIBITED_OUTPUT", case_version=cv.id, repetition=str(rep), stage=stage, cases=((cv.id, rep),))
        if hits:
            shown = ", ".join(f"{v.finding.id} matches prohibited {v.key_finding}" for v in hits)
            yield Observed(subject="-", result=m.FAILED, reason="prohibited", detail=shown, **common)
        else:
            yield Observed(subject="-", result=m.PASSED, **common)


def quote_fidelity(judged: JudgedRun) -> Iterator[Observed]:
    """Each quote the engine gave, in any finding of any stage: it must stand verbatim in the document."""
    for cv, rep, stage, verdict in _iter(judged):
        for v in verdict.findings:
            if v.finding.quote is None:
                continue
            common = dict(measure="QUOTE_FIDELITY", case_version=cv.id, repetition=str(rep), stage=stage,
                          subject=v.finding.id, cases=((cv.id, rep),), quote=collapse(v.finding.quote))
            if v.quote_found:
                yield Observed(result=m.PASSED, **common)
            elif not v.finding.quote.strip():
                yield Observed(result=m.FAILED, reason="quote.empty", detail="the quote is empty and cannot be checked", **common)
            else:
                yield Observed(result=m.FAILED, reason="quote.not-found",
                               detail=f"quote not in the document: \"{v.finding.quote}\"", **common)


def reducer_survival(judged: JudgedRun) -> Iterator[Observed]:
    """Each reviewer-expected finding that a reviewer reported or the merge produced: it must survive the merge unchanged."""
    if m.REPORT not in judged.stages:
        return
    for cv in judged.case_versions:
        ctx = judged.contexts[cv.id]
        for rep in range(1, judged.run.repetitions + 1):
            reviewer = judged.verdicts[(cv.id, rep, m.REVIEWER)]
            report = judged.verdicts[(cv.id, rep, m.REPORT)]
            for rev_e, rep_e in zip(reviewer.expected, report.expected):
                target = rev_e.expected
                if not target.reviewer_expected:
                    continue
                own = [v.finding for v in reviewer.findings if v.key_finding == target.id and v.category in (m.MATCHED, m.DUPLICATE)]
                if not own and rep_e.finding is None:
                    continue
                common = dict(measure="REDUCER_SURVIVAL", case_version=cv.id, repetition=str(rep), stage=m.REPORT,
                              subject=target.id, cases=((cv.id, rep),))
                result = _survival(ctx, own, rep_e, report, target, judged.method)
                if result is None:
                    yield Observed(result=m.PASSED, **common)
                else:
                    yield Observed(result=m.FAILED, reason=result[0], detail=result[1], **common)


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
        reading[f"{stage}:unexpected"] = sum(1 for v in verdict.findings if v.category == m.UNEXPECTED)
    if m.REPORT in judged.stages:
        for expected_id, fate in _fate(judged, cv_id, rep).items():
            reading[f"merge:{expected_id}"] = fate
    return reading


def invariant_pairs(judged: JudgedRun) -> Iterator[Observed]:
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
                yield Observed(result=m.PASSED, **common)
                continue
            first = differing[0]
            scope = first.split(":", 1)[0]
            common["stage"] = m.REVIEWER if scope == m.REVIEWER else m.REPORT
            yield Observed(result=m.FAILED, reason=_pair_reason(first),
                           detail=f"{first}: {a} reads {_show(left.get(first, 'not in key'))}, "
                                  f"{b} reads {_show(right.get(first, 'not in key'))}"
                                  + (f" (+{len(differing) - 1} more difference(s))" if len(differing) > 1 else ""),
                           **common)


def _pair_reason(key: str) -> str:
    scope, _, what = key.partition(":")
    if scope == "merge":
        return "merge"
    return "count.unexpected" if what == "unexpected" else "expected"


def _show(value: object) -> str:
    if isinstance(value, tuple):
        kind, missing, rule = value
        return f"found as {kind} (missing={str(missing).lower()}, rule {rule})"
    return str(value)


def identical_input_stability(judged: JudgedRun) -> Iterator[Observed]:
    """Each unordered pair of repetitions of one case version in one stage: same outcomes and counts."""
    for cv in judged.case_versions:
        for stage in judged.stages:
            summaries = {rep: _summary(judged.verdicts[(cv.id, rep, stage)]) for rep in range(1, judged.run.repetitions + 1)}
            for i, j in combinations(sorted(summaries), 2):
                common = dict(measure="IDENTICAL_INPUT_STABILITY", case_version=cv.id, repetition=f"{i}-{j}", stage=stage,
                              subject="-", cases=((cv.id, i), (cv.id, j)))
                left, right = summaries[i], summaries[j]
                differing = [k for k in left if left[k] != right[k]]
                if not differing:
                    yield Observed(result=m.PASSED, **common)
                    continue
                first = differing[0]
                reason = "outcome" if first.startswith("expected:") else f"count.{first}"
                yield Observed(result=m.FAILED, reason=reason,
                               detail=f"{first}: repetition {i} gives {left[first]}, repetition {j} gives {right[first]}"
                                      + (f" (+{len(differing) - 1} more difference(s))" if len(differing) > 1 else ""),
                               **common)


def _summary(verdict: m.StageVerdict) -> dict[str, object]:
    summary: dict[str, object] = {f"expected:{ev.expected.id}": ("matched" if ev.finding else "missed") for ev in verdict.expected}
    counted = [v for v in verdict.findings if v.category != m.VOLUNTARY]
    summary["flaws"] = sum(1 for v in counted if v.finding.kind == m.FLAW)
    summary["strengths"] = sum(1 for v in counted if v.finding.kind == m.STRENGTH)
    summary["unexpected"] = sum(1 for v in counted if v.category == m.UNEXPECTED)
    summary["prohibited"] = sum(1 for v in counted if v.category == m.PROHIBITED)
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
