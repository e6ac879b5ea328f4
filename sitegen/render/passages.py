"""A quote's or passage's lines of a document, the covered part marked: found by the whitespace rule, remembered per case."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from sitegen.core.text import DocumentText


@dataclass(frozen=True)
class MarkedLine:
    """One document line split around the part a quote or passage covers."""

    number: int
    before: str
    marked: str
    after: str


@lru_cache(maxsize=8192)
def passage_lines(document: str, quote: str | None, lines: tuple[int, int] | None) -> tuple[MarkedLine, ...]:
    """The document lines a quote (or else a line span) covers, with the covered part marked.

    The quote stands where the whitespace rule finds it (core/text.py), preferably from the first of the given lines on.
    Remembered: one case's passages and quotes recur in every run, repetition, stage and language.
    """
    all_lines = document.split("\n")
    if quote is not None:
        text = DocumentText(document)
        span = text.span(quote, from_line=lines[0] if lines is not None else 1) or text.span(quote)
        if span is not None:
            return _mark(all_lines, *span)
    if lines is None:
        return ()
    first, last = max(lines[0], 1), min(lines[1], len(all_lines))
    return tuple(MarkedLine(n, "", all_lines[n - 1], "") for n in range(first, last + 1))


def _mark(all_lines: list[str], start: int, end: int) -> tuple[MarkedLine, ...]:
    out = []
    offset = 0
    for number, text in enumerate(all_lines, start=1):
        line_end = offset + len(text)
        if line_end >= start and offset < end:
            a = max(start, offset) - offset
            b = min(end, line_end) - offset
            out.append(MarkedLine(number, text[:a], text[a:b], text[b:]))
        if offset >= end:
            break
        offset = line_end + 1
    return tuple(out)
