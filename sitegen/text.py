"""The one whitespace rule of METHOD.md and where a quote stands in a document, shared by loader and scorer."""

from __future__ import annotations

import bisect
import re

_RUN = re.compile(r"[ \t\r\n]+")


def collapse(text: str) -> str:
    """Collapse every run of spaces, tabs and line breaks into one space; nothing else is normalised."""
    return _RUN.sub(" ", text)


class DocumentText:
    """A document's collapsed text with a map back to its original line numbers."""

    def __init__(self, document: str):
        self.document = document
        self.line_count = document.count("\n") + 1
        self.collapsed = collapse(document)
        self._collapsed_starts: list[int] | None = None  # the map back to lines is built on first need

    def _build_map(self) -> None:
        document = self.document
        pieces: list[str] = []
        # breakpoints: collapsed offset -> original offset, at the start of every piece
        self._collapsed_starts: list[int] = []
        self._original_starts: list[int] = []
        position = 0
        collapsed_length = 0
        for match in _RUN.finditer(document):
            if match.start() > position:
                self._collapsed_starts.append(collapsed_length)
                self._original_starts.append(position)
                pieces.append(document[position : match.start()])
                collapsed_length += match.start() - position
            self._collapsed_starts.append(collapsed_length)
            self._original_starts.append(match.start())
            pieces.append(" ")
            collapsed_length += 1
            position = match.end()
        if position < len(document):
            self._collapsed_starts.append(collapsed_length)
            self._original_starts.append(position)
            pieces.append(document[position:])
        assert "".join(pieces) == self.collapsed
        self._newlines = [i for i, c in enumerate(document) if c == "\n"]

    def _original(self, collapsed_offset: int) -> int:
        index = bisect.bisect_right(self._collapsed_starts, collapsed_offset) - 1
        if index < 0:
            return 0
        return self._original_starts[index] + (collapsed_offset - self._collapsed_starts[index])

    def _line(self, original_offset: int) -> int:
        return bisect.bisect_left(self._newlines, original_offset) + 1

    def contains(self, quote: str) -> bool:
        needle = collapse(quote)
        return bool(needle.strip()) and needle in self.collapsed

    def occurrences(self, quote: str) -> tuple[tuple[int, int], ...]:
        """Line spans (first, last) of every place the collapsed quote stands in the document."""
        needle = collapse(quote)
        if not needle.strip():
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

    def lines_text(self, first: int, last: int) -> str:
        return "\n".join(self.document.split("\n")[first - 1 : last])
