"""PROHIBITED_OUTPUT: no stage of any repetition may give a finding the key prohibits."""

from __future__ import annotations

from typing import Iterator

from sitegen.core import model as m
from sitegen.score.measures.base import N_, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, each_stage, texts_of

REASONS = (
    ReasonText("prohibited", N_("a prohibited finding occurred"),
               lambda why: ", ".join(f"{finding} matches prohibited {key}" for finding, key in why.hits)),
)
_TEXTS = texts_of(REASONS)


def prohibited_output(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each stage of each repetition of any case version: no prohibited finding of the key may occur."""
    yield from each_stage(judged, "PROHIBITED_OUTPUT", judged.case_versions, _prohibited_found, _TEXTS, listed)


def _prohibited_found(verdict: m.StageVerdict) -> Reason | None:
    # called for every stage of every answer and mostly empty: a list comprehension, not a generator fed to tuple()
    hits = [(v.finding.id, v.key_finding) for v in verdict.findings if v.category == m.PROHIBITED]
    return Reason("prohibited", hits=tuple(hits)) if hits else None


MEASURE = Measure("PROHIBITED_OUTPUT", N_("No prohibited findings"), prohibited_output, REASONS, example_case="seal-detail-missing")
