"""The one whitespace rule of METHOD.md and where a quote stands in a document, shared by loader, scorer and pages."""

from __future__ import annotations

import bisect
import re

_LONG_RUN = re.compile(r"[ \t\r\n]{2,}")  # the runs that collapsing shortens; a single space, tab or line break keeps its length


def collapse(text: str) -> str:
    """Collapse every run of spaces, tabs and line breaks into one space; nothing else is normalised."""
    # the same as re.sub(r"[ \t\r\n]+", " ", text), several times faster: tabs and line breaks become spaces, then runs of spaces
    # halve until none is left; a run never meets another or vanishes, so each ends as exactly one space
    spaced = text.replace("\t", " ").replace("\r", " ").replace("\n", " ")
    while "  " in spaced:
        spaced = spaced.replace("  ", " ")
    return spaced


def quotes_nothing(collapsed: str) -> bool:
    """Whether a collapsed quote is empty or one space: only METHOD.md's whitespace, which cannot be checked.

    A no-break space, a form feed or any other character is text like the rest (str.strip() would take those too).
    """
    return collapsed == "" or collapsed == " "


class DocumentText:
    """A document's collapsed text with a map back to its original characters and line numbers."""

    def __init__(self, document: str):
        self.document = document
        self.line_count = document.count("\n") + 1
        self.collapsed = collapse(document)
        self._collapsed_starts: list[int] | None = None  # the map back to lines is built on first need

    def _build_map(self) -> None:
        """Breakpoints (collapsed offset, original offset) where the shift between the two changes: around each shortened run."""
        document = self.document
        self._collapsed_starts = [0]
        self._original_starts = [0]
        shortened = 0  # characters the runs so far lost
        for match in _LONG_RUN.finditer(document):
            start, end = match.start(), match.end()
            # the run's one space stands for its first character; what follows it starts at the run's end
            self._collapsed_starts += [start - shortened, start - shortened + 1]
            self._original_starts += [start, end]
            shortened += end - start - 1
        assert len(document) - shortened == len(self.collapsed)
        self._newlines = [match.start() for match in re.finditer("\n", document)]

    def _original(self, collapsed_offset: int) -> int:
        index = bisect.bisect_right(self._collapsed_starts, collapsed_offset) - 1
        if index < 0:
            return 0
        return self._original_starts[index] + (collapsed_offset - self._collapsed_starts[index])

    def _collapsed(self, original_offset: int) -> int:
        """The collapsed offset of an original one; any character of a shortened run maps to the run's one space."""
        index = bisect.bisect_right(self._original_starts, original_offset) - 1
        offset = self._collapsed_starts[index] + (original_offset - self._original_starts[index])
        if index + 1 < len(self._collapsed_starts):
            offset = min(offset, self._collapsed_starts[index + 1] - 1)
        return offset

    def _line(self, original_offset: int) -> int:
        return bisect.bisect_left(self._newlines, original_offset) + 1

    def contains(self, quote: str) -> bool:
        needle = collapse(quote)
        return not quotes_nothing(needle) and needle in self.collapsed

    def occurrences(self, quote: str) -> tuple[tuple[int, int], ...]:
        """Line spans (first, last) of every place the collapsed quote stands in the document."""
        needle = collapse(quote)
        if quotes_nothing(needle):
            return ()
        if self._collapsed_starts is None:
            self._build_map()
        spans = []
        start = self.collapsed.find(needle)
        while start != -1:
            first = self._line(self._original(start))
            last = self._line(self._original(start + len(needle) - 1))
            spans.append((first, last))
            start = self.collapsed.find(needle, start + 1)
        return tuple(spans)

    def span(self, quote: str, *, from_line: int = 1) -> tuple[int, int] | None:
        """Original character offsets [start, end) of the first place the collapsed quote stands from line `from_line` on.

        A collapsed space stands for a whole run of the document's whitespace, so the span is what the regex of the quote
        with each run written `[ \\t\\r\\n]+` would match, searched from the start of that line: a quote that begins with
        whitespace and meets a run the line's start cuts into begins at the line's start. None when it stands nowhere
        there, or quotes only whitespace.
        """
        needle = collapse(quote)
        if quotes_nothing(needle):
            return None
        if self._collapsed_starts is None:
            self._build_map()
        origin = 0 if from_line <= 1 else (self._newlines[from_line - 2] + 1 if from_line - 2 < len(self._newlines)
                                             else len(self.document) + 1)
        at = self.collapsed.find(needle, self._collapsed(origin))
        if at < 0:
            return None
        return max(self._original(at), origin), self._original(at + len(needle))

    def lines(self) -> tuple[str, ...]:
        """Each line's characters without its line break: a line ends at "\n", and a "\r" before it is part of the
        break (a CRLF document), not of the line (METHOD.md: a line is "that line's characters without its line break")."""
        return tuple(line[:-1] if line.endswith("\r") else line for line in self.document.split("\n"))

    def lines_text(self, first: int, last: int) -> str:
        """The text of lines `first` to `last`: each without its line break, one "\n" between them."""
        return "\n".join(self.lines()[first - 1 : last])
