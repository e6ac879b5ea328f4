"""REDUCER_SURVIVAL: a reviewer-expected finding a reviewer reported (or the merge produced) must survive the merge unchanged."""

from __future__ import annotations

from typing import Iterator

from sitegen.core import model as m
from sitegen.score.matching import MatchingMethod, evidence
from sitegen.score.measures.base import (N_, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, observed_of,
                                         texts_of)


def _changed_rule(why: Reason) -> str:
    if why.reviewer_rule is None:
        return f"report finding {why.finding} names primary rule {why.rule}, which the key does not accept"
    return f"report finding {why.finding} names primary rule {why.rule}, the reviewer named {why.reviewer_rule}"


REASONS = (
    ReasonText("added", N_("appeared only after the merge"),
               lambda why: f"the report has it (finding {why.finding}) but no reviewer reported it, although a reviewer should have"),
    ReasonText("lost", N_("lost in the merge"),
               lambda why: f"reviewer finding {why.reviewer_finding} reported it, but the delivered report no longer matches it"),
    ReasonText("changed.rule", N_("primary rule changed in the merge"), _changed_rule),
    ReasonText("trace", N_("traced to another finding"),
               lambda why: f"report finding {why.finding} is traced to {', '.join(why.trace) or 'nothing'}, "
                           f"not to the reviewer's finding {why.reviewer_finding}"),
    ReasonText("changed.kind", N_("kind changed in the merge"),
               lambda why: f"report finding {why.finding} carries it as a {why.kind}, not a {why.expected_kind}"),
    ReasonText("changed.missing", N_("missing flag changed in the merge"),
               lambda why: f"report finding {why.finding} changed the missing flag to {str(why.missing).lower()}"),
)
_TEXTS = texts_of(REASONS)


def reducer_survival(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each reviewer-expected finding that a reviewer reported or the merge produced: it must survive the merge unchanged."""
    if m.REPORT not in judged.stages:
        return
    reviewer_at, report_at = judged.stages.index(m.REVIEWER), judged.stages.index(m.REPORT)
    involved = None if listed else judged.counter()
    total = 0
    for cv in judged.case_versions:
        ctx = judged.contexts[cv.id]
        seen: list[tuple[m.StageVerdict, m.StageVerdict, list]] = []  # verdicts of earlier repetitions, with their outcomes
        for slot in judged.case_slots[cv.id]:
            reviewer, report = slot.verdicts[reviewer_at], slot.verdicts[report_at]
            # a repetition that repeated an earlier one's answers has the very same verdicts, and so the same outcomes
            outcomes = next((o for before, after, o in seen if before is reviewer and after is report), None)
            if outcomes is None:
                # each failure's record detail rendered once, for every repetition that shares it
                outcomes = [(subject, failure, None if failure is None else _TEXTS[failure.code].detail(failure))
                            for subject, failure in _survivals(ctx, reviewer, report, judged.method)]
                seen.append((reviewer, report, outcomes))
            repetition, cases = slot.label, slot.cases
            passed = 0
            for subject, failure, detail in outcomes:
                if failure is not None:
                    yield observed_of(("REDUCER_SURVIVAL", cv.id, repetition, m.REPORT, subject, m.FAILED, failure.code, detail,
                                       cases, None, failure))
                elif listed:
                    yield Observed("REDUCER_SURVIVAL", cv.id, repetition, m.REPORT, subject, m.PASSED, "", "", cases, None)
                else:
                    passed += 1
            if passed:
                involved[slot.index] = passed
                total += passed
    if involved is not None:
        yield Passed(total, involved)


def _survivals(ctx, reviewer: m.StageVerdict, report: m.StageVerdict, method) -> Iterator[tuple[str, Reason | None]]:
    """(expected finding, None or why it did not survive) for each one a reviewer reported or the merge produced."""
    owners = _owners(reviewer, method)
    for rev_e, rep_e in zip(reviewer.expected, report.expected):
        target = rev_e.expected
        if not target.reviewer_expected:
            continue
        own = owners.get(target.id, ())
        if not own and rep_e.finding is None:
            continue
        yield target.id, _survival(ctx, own, rep_e, report, target, method)


def _owners(reviewer: m.StageVerdict, method: MatchingMethod) -> dict[str, list[m.Finding]]:
    """Each expected finding's own reviewer findings, in answer order: assigned to it, or a duplicate of it.

    From scorer 7 a duplicate is the reviewer's own for every expected finding it duplicates; scorer 5 and 6 counted
    only the first of them in key order, and keep doing so for the runs they scored.
    """
    owners: dict[str, list[m.Finding]] = {}
    for v in reviewer.findings:
        if v.category == m.MATCHED:
            owners.setdefault(v.key_finding, []).append(v.finding)
        elif v.category == m.DUPLICATE:
            for target in v.duplicate_of if method.survival_through_every_duplicate else (v.key_finding,):
                owners.setdefault(target, []).append(v.finding)
    return owners


def _survival(ctx, own, rep_e, report, target, method) -> Reason | None:
    if not own:
        return Reason("added", finding=rep_e.finding)
    if rep_e.finding is None:
        changed = _changed(ctx, own, report, target, method)
        if changed:
            return changed
        return Reason("lost", reviewer_finding=own[0].id)
    delivered = next(v.finding for v in report.findings if v.finding.id == rep_e.finding)
    same_rule = [f for f in own if f.rule == delivered.rule]
    if not same_rule:
        return Reason("changed.rule", finding=delivered.id, rule=delivered.rule, reviewer_rule=own[0].rule)
    if target.kind == m.FLAW:
        traced = [f for f in same_rule if f.id in delivered.trace]
        if not traced:
            return Reason("trace", finding=delivered.id, trace=tuple(delivered.trace), reviewer_finding=same_rule[0].id)
    return None


def _changed(ctx, own, report, target, method) -> Reason | None:
    for v in report.findings:
        f = v.finding
        if evidence(ctx, f, target.passage, method) is None and not any(o.id in f.trace for o in own):
            continue
        if f.kind != target.kind:
            return Reason("changed.kind", finding=f.id, kind=f.kind, expected_kind=target.kind)
        if f.missing != target.missing:
            return Reason("changed.missing", finding=f.id, missing=f.missing)
        if f.rule not in target.rules:
            return Reason("changed.rule", finding=f.id, rule=f.rule, reviewer_rule=None)
    return None


MEASURE = Measure("REDUCER_SURVIVAL", N_("Nothing is lost in the merge"), reducer_survival, REASONS, example_case="request-refused")
