"""IDENTICAL_INPUT_STABILITY: two repetitions of one case version in one stage must give the same outcomes and counts."""

from __future__ import annotations

from itertools import combinations
from typing import Iterator

from sitegen.core import model as m
from sitegen.score.measures.base import (N_, Difference, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, failed,
                                         more, texts_of)


def _detail(why: Reason) -> str:
    """The first difference in the record's words, and how many more there are; every one is kept in the reason."""
    first = why.differences[0]
    i, j = why.repetitions
    return f"{first.key}: repetition {i} gives {first.left}, repetition {j} gives {first.right}" + more(why.differences)


REASONS = (
    ReasonText("outcome", N_("an expected finding found in one repetition, missed in the other"), _detail),
    ReasonText("count.flaws", N_("number of flaws differs"), _detail),
    ReasonText("count.strengths", N_("number of strengths differs"), _detail),
    ReasonText("count.unexpected", N_("number of unexpected findings differs"), _detail),
    ReasonText("count.prohibited", N_("number of prohibited findings differs"), _detail),
)
_TEXTS = texts_of(REASONS)


def identical_input_stability(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each unordered pair of repetitions of one case version in one stage: same outcomes and counts."""
    repetitions = range(1, judged.run.repetitions + 1)
    for cv in judged.case_versions:
        for stage in judged.stages:
            verdicts = {rep: judged.verdicts[(cv.id, rep, stage)] for rep in repetitions}
            summaries: dict[int, dict[str, object]] = {}
            for i, j in combinations(repetitions, 2):
                cases = ((cv.id, i), (cv.id, j))
                if verdicts[i] is verdicts[j] or _summary_of(i, verdicts, summaries) == _summary_of(j, verdicts, summaries):
                    # equal answers are judged once, so nothing can differ; equal summaries are compared in one go
                    if listed:
                        yield Observed("IDENTICAL_INPUT_STABILITY", cv.id, f"{i}-{j}", stage, "-", m.PASSED, "", "", cases, None)
                    else:
                        yield Passed(1, cases)
                    continue
                left, right = summaries[i], summaries[j]
                differences = tuple([Difference(k, left[k], right[k]) for k in left if left[k] != right[k]])
                first = differences[0].key
                why = Reason("outcome" if first.startswith("expected:") else f"count.{first}", repetitions=(i, j),
                             differences=differences)
                yield failed("IDENTICAL_INPUT_STABILITY", cv.id, f"{i}-{j}", stage, "-", m.FAILED, why, _TEXTS, cases)


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


MEASURE = Measure("IDENTICAL_INPUT_STABILITY", N_("Same assessment when repeated"), identical_input_stability, REASONS,
                  example_case="papers-location-unstated")
