"""QUOTE_FIDELITY: every quote the engine gives must stand verbatim in the document."""

from __future__ import annotations

from typing import Iterator

from sitegen.core import model as m
from sitegen.core.text import quotes_nothing
from sitegen.score.measures.base import N_, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, each_case, failed, texts_of

REASONS = (
    ReasonText("quote.empty", N_("empty quote, cannot be checked"), lambda why: "the quote is empty and cannot be checked"),
    ReasonText("quote.not-found", N_("quote not in the document"), lambda why: f"quote not in the document: \"{why.quote}\""),
)
_TEXTS = texts_of(REASONS)


def quote_fidelity(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each quote the engine gave, in any finding of any stage: it must stand verbatim in the document."""
    for cv, rep in each_case(judged):
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
                why = Reason("quote.empty" if quotes_nothing(ctx.collapsed(quote)) else "quote.not-found", finding=v.finding.id, quote=quote)
                yield failed("QUOTE_FIDELITY", cv.id, repetition, stage, v.finding.id, m.FAILED, why, _TEXTS, cases,
                             ctx.collapsed(quote))
        if passed:
            yield Passed(passed, cases)


MEASURE = Measure("QUOTE_FIDELITY", N_("Quotes are verbatim"), quote_fidelity, REASONS, example_case="figure-without-document")
