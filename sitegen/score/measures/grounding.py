"""GROUNDING: each expected finding must be found; a first miss waits for its rerun, which may dismiss it."""

from __future__ import annotations

from typing import Iterator

from sitegen.core import model as m
from sitegen.score.measures.base import (N_, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, observed_of,
                                         texts_of)


def _miss(text: str):
    """The record's words for a miss, with the closest finding when there was one (as recorded results say it)."""
    return lambda why: f"{text} (closest finding: {why.closest})" if why.closest else text


def _explained(text: str):
    return lambda why: text.format(got=why.got, want=why.want)


REASONS = (
    ReasonText("nothing", N_("nothing reported"), _miss("nothing was reported for it"),
               _explained("nothing was reported for it")),
    ReasonText("kind", N_("reported as the other kind (flaw or strength)"),
               _miss("the passage was reported in the other list (flaw/strength)"),
               _explained("the passage was reported in the other list (a {got} instead of a {want})")),
    ReasonText("rule", N_("primary rule not accepted by the key"), _miss("the primary rule named is not one the key accepts"),
               _explained("the primary rule {got} is not one the key accepts ({want})")),
    ReasonText("rule.support", N_("accepted rule named only as support"),
               _miss("an accepted rule was named only as a supporting rule, not as the primary rule"),
               _explained("an accepted rule was named only as support; the primary rule was {got}")),
    ReasonText("missing", N_("missing flag differs"), _miss("the finding's missing flag differs from the key's"),
               _explained("the finding says missing={got}, the key says missing={want}")),
    ReasonText("evidence", N_("passage not pointed at"), _miss("the rule was named but the finding does not point at the passage"),
               lambda why: "the rule was named, but the finding quotes or locates a passage where nothing is to be quoted"
               if why.params.get("no_passage") else "the rule was named, but the finding does not point at the passage",
               word_absent=N_("quotes or locates a passage where nothing is to be quoted")),
    ReasonText("taken", N_("the matching finding went to another expected finding"),
               _miss("the only finding that matched it was assigned to another expected finding"),
               _explained("the finding that matched it was assigned to another expected finding")),
    ReasonText("rerun.crashed", N_("the rerun crashed"), lambda why: "the rerun crashed before it finished"),
)
_TEXTS = texts_of(REASONS)


def miss_reason(verdict: m.ExpectedVerdict, **more: object) -> Reason:
    """The structured reason of an expected finding's miss: the matcher's code and the closest finding, if any, and
    `no_passage` when the key expects something wholly absent, so a page does not speak of a passage (the record's
    detail, sealed, keeps its words)."""
    return Reason(verdict.reason, expected=verdict.expected.id, closest=verdict.closest, **_passage_free(verdict), **more)


def _passage_free(verdict: m.ExpectedVerdict) -> dict[str, bool]:
    return {"no_passage": True} if verdict.expected.passage is None else {}


def detail(result: str, why: Reason) -> str:
    """The results record's English detail of a GROUNDING observation, from its result and structured reason."""
    text = _TEXTS[why.code].detail(why)
    if why.code == "rerun.crashed":
        return text
    if result == m.PENDING:
        return f"first miss, no rerun recorded: {text}"
    if result == m.DISMISSED:
        return f"first miss ({text}) dismissed by rerun: rerun finding {why.rerun_finding} matched"
    return f"miss confirmed by rerun: {text}"


def grounding(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each expected finding, per stage and repetition; a first miss waits for its rerun (reviewer stage: reviewer-expected only)."""
    # not listing: by the verdict's number (stage included), how many it found and the misses to look at in each repetition
    tallied: list = [None] * judged.verdict_count
    involved = None if listed else judged.counter()
    total = 0
    stages = judged.stages
    for slot in judged.slots:
        answer, cv_id, repetition, cases = slot.answer, slot.case_version, slot.label, slot.cases
        passed = 0
        for stage, verdict, number in zip(stages, slot.verdicts, slot.numbers):
            if listed:
                observed = _observed_in(verdict, stage)
            else:
                # a verdict standing for several repetitions (equal answers are judged once) is counted once; its misses
                # are looked at in every repetition, each with its own rerun
                tally = tallied[number]
                if tally is None:
                    observed = _observed_in(verdict, stage)
                    tally = tallied[number] = (sum(ev.finding is not None for ev in observed),
                                               [ev for ev in observed if ev.finding is None])
                passed += tally[0]
                observed = tally[1]
            if not observed:  # mostly: nothing missed, or nothing expected
                continue
            rerun: list[m.StageVerdict] = []  # the rerun's verdict of this stage, judged on the first miss that needs it
            for ev in observed:
                if ev.finding is not None:
                    # all fields by position: a large run makes millions of these, and keywords and defaults cost more than the tuple
                    yield Observed("GROUNDING", cv_id, repetition, stage, ev.expected.id, m.PASSED, "", "", cases, None)
                    continue
                if answer.rerun is None:
                    yield _observed(cv_id, repetition, stage, ev, m.PENDING, miss_reason(ev), cases)
                    continue
                if answer.rerun.status != m.COMPLETED:
                    # the record says only that the rerun crashed; the reason keeps what the first miss was
                    why = Reason("rerun.crashed", expected=ev.expected.id, miss=ev.reason, closest=ev.closest, **_passage_free(ev))
                    yield _observed(cv_id, repetition, stage, ev, m.PENDING, why, cases)
                    continue
                if not rerun:
                    rerun.append(judged.rerun_verdict(answer, stage))
                again = next(r for r in rerun[0].expected if r.expected.id == ev.expected.id)
                if again.finding is not None:
                    yield _observed(cv_id, repetition, stage, ev, m.DISMISSED, miss_reason(ev, rerun_finding=again.finding), cases)
                else:
                    yield _observed(cv_id, repetition, stage, ev, m.FAILED, miss_reason(ev, rerun_finding=None), cases)
        if passed:
            involved[slot.index] = passed
            total += passed
    if involved is not None:
        yield Passed(total, involved)


def _observed_in(verdict: m.StageVerdict, stage: str) -> list[m.ExpectedVerdict]:
    """The expected findings a stage is observed on: at the reviewer stage, only those the key expects a reviewer to report."""
    if stage == m.REVIEWER:
        return [ev for ev in verdict.expected if ev.expected.reviewer_expected]
    return list(verdict.expected)


def _observed(cv_id: str, repetition: str, stage: str, ev: m.ExpectedVerdict, result: str, why: Reason, cases) -> Observed:
    return observed_of(("GROUNDING", cv_id, repetition, stage, ev.expected.id, result, why.code, detail(result, why), cases, None,
                           why))


MEASURE = Measure("GROUNDING", N_("Finds what the key expects"), grounding, REASONS, example_case="cure-unchecked")
