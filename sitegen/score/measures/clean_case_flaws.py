"""CLEAN_CASE_FLAWS: on a clean case version no stage of any repetition may report a flaw."""

from __future__ import annotations

from typing import Iterator

from sitegen.core import model as m
from sitegen.score.measures.base import N_, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, each_stage, texts_of

REASONS = (
    ReasonText("flaw", N_("a flaw reported on a clean case"),
               lambda why: f"{len(why.flaws)} flaw(s) reported on a clean case: {', '.join(why.flaws)}"),
)
_TEXTS = texts_of(REASONS)


def clean_case_flaws(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each stage of each repetition of a clean case version: no flaw may be reported."""
    clean = [cv for cv in judged.case_versions if cv.clean]
    yield from each_stage(judged, "CLEAN_CASE_FLAWS", clean, _flaws_reported, _TEXTS, listed)


def _flaws_reported(verdict: m.StageVerdict) -> Reason | None:
    flaws = tuple([v.finding.id for v in verdict.findings if v.finding.kind == m.FLAW])
    return Reason("flaw", flaws=flaws) if flaws else None


MEASURE = Measure("CLEAN_CASE_FLAWS", N_("No false alarms on clean cases"), clean_case_flaws, REASONS, example_case="tap-sample")
