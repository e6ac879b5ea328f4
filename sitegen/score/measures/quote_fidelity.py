"""QUOTE_FIDELITY: every quote the engine gives must stand verbatim in the document."""

from __future__ import annotations

from typing import Iterator

from sitegen.core import model as m
from sitegen.core.text import quotes_nothing
from sitegen.score.measures.base import (N_, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, failed,
                                         observed_of, texts_of)

REASONS = (
    ReasonText("quote.empty", N_("empty quote, cannot be checked"), lambda why: "the quote is empty and cannot be checked"),
    ReasonText("quote.not-found", N_("quote not in the document"), lambda why: f"quote not in the document: \"{why.quote}\""),
)
_TEXTS = texts_of(REASONS)


def quote_fidelity(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each quote the engine gave, in any finding of any stage: it must stand verbatim in the document."""
    looked_at: list = [None] * judged.verdict_count  # not listing: by the verdict's number, its passed count and failures
    involved = None if listed else judged.counter()
    total = 0
    stages = judged.stages
    for slot in judged.slots:
        ctx = judged.contexts[slot.case_version]
        cv_id, repetition, cases = slot.case_version, slot.label, slot.cases
        passed = 0
        for stage, verdict, number in zip(stages, slot.verdicts, slot.numbers):
            if not listed:
                # a verdict standing for several repetitions (equal answers are judged once) is looked at once
                seen = looked_at[number]
                if seen is None:
                    seen = looked_at[number] = _looked_at(ctx, verdict)
                passed += seen[0]
                for subject, why, detail, quote in seen[1]:
                    yield observed_of(("QUOTE_FIDELITY", cv_id, repetition, stage, subject, m.FAILED, why.code, detail,
                                          cases, quote, why))
                continue
            for v in verdict.findings:
                quote = v.finding.quote
                if quote is None:
                    continue
                if v.quote_found:
                    yield Observed("QUOTE_FIDELITY", cv_id, repetition, stage, v.finding.id, m.PASSED, "", "", cases, ctx.collapsed(quote))
                    continue
                why = _why(ctx, v)
                yield failed("QUOTE_FIDELITY", cv_id, repetition, stage, v.finding.id, m.FAILED, why, _TEXTS, cases,
                             ctx.collapsed(quote))
        if passed:
            involved[slot.index] = passed
            total += passed
    if involved is not None:
        yield Passed(total, involved)


def _looked_at(ctx, verdict: m.StageVerdict) -> tuple[int, list]:
    """One stage's quotes: how many stand in the document, and (finding, reason, detail, collapsed quote) of the others."""
    passed, failures = 0, []
    for v in verdict.findings:
        quote = v.finding.quote
        if quote is None:
            continue
        if v.quote_found:
            passed += 1
            continue
        why = _why(ctx, v)
        failures.append((v.finding.id, why, _TEXTS[why.code].detail(why), ctx.collapsed(quote)))
    return passed, failures


def _why(ctx, v: m.FindingVerdict) -> Reason:
    quote = v.finding.quote
    return Reason("quote.empty" if quotes_nothing(ctx.collapsed(quote)) else "quote.not-found", finding=v.finding.id, quote=quote)


MEASURE = Measure("QUOTE_FIDELITY", N_("Quotes are verbatim"), quote_fidelity, REASONS, example_case="figure-without-document")
