"""Items of a long array that repeat an earlier item's text but for its leading members, taken without decoding them again.

An engine answers a case alike in most repetitions, so in an answers file (one answer a line) most lines differ from an
earlier one only in the members that say which answer it is (`"run": …, "case_version": …, "repetition": …`). The text
after those members (the tail) decodes, checks and packs exactly as it did before: JSON is context-free, and after the
same leading members' tokens the same tail closes the same object at the same place. So a line whose leading members
have the plain form (strings without escapes, integers) and whose tail is one the reader kept is given back as those
members and what the reader kept for the tail; any other item is decoded as usual.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_WS = " \t\r"
_FORMS = {"string": r'"([^"\\\x00-\x1f]*)"', "integer": r"(-?(?:0|[1-9][0-9]{0,17}))"}  # no escapes: the text is the value


class Repeat(NamedTuple):
    """An item recognised as a repeat: its leading members (decoded), and what the reader kept for its tail."""

    lead: dict
    kept: object


class Repeats:
    """Remembers the tails of the items a reader kept something for, and recognises later items with the same tail."""

    LIMIT = 4096  # tails remembered at most (an answer's tail is a few KB); the memory starts afresh beyond

    def __init__(self, leading: tuple[tuple[str, str], ...]):
        """`leading`: (name, "string" or "integer") of the members every item starts with, in that order."""
        self._names = tuple(name for name, _ in leading)
        self._integers = frozenset(name for name, form in leading if form == "integer")
        self._lead = re.compile(r"\{" + ", ".join(f'"{re.escape(name)}": {_FORMS[form]}' for name, form in leading) + ", ")
        self._kept: dict[str, object] = {}
        self._last: str | None = None  # the tail of the item decoded last, if it had the plain leading members

    def repeat(self, text: str, pos: int) -> tuple[Repeat, int] | None:
        """The item at `pos` as a Repeat and where its text ends, when its tail is one kept; else None (decode it)."""
        self._last = None
        match = self._lead.match(text, pos)
        if match is None:
            return None
        start = match.end()
        end = text.find("\n", start)
        if end < 0:
            end = len(text)
        while text[end - 1] in _WS:
            end -= 1
        if text[end - 1] == ",":
            end -= 1
            while text[end - 1] in _WS:
                end -= 1
        tail = text[start:end]
        kept = self._kept.get(tail)
        if kept is None:
            self._last = (start, end, tail)
            return None
        lead = dict(zip(self._names, match.groups()))
        for name in self._integers:
            lead[name] = int(lead[name])
        return Repeat(lead, kept), end

    def decoded(self, text: str, end: int) -> None:
        """The item looked at last was decoded, its text ending at `end`: its tail is the text after its leading members."""
        if self._last is not None:
            start, line_end, tail = self._last
            self._last = (start, end, tail if end == line_end else text[start:end])

    def keep(self, value: object) -> None:
        """Remember `value` for the tail of the item decoded last (the reader found it sound), if it had one."""
        if self._last is None:
            return
        if len(self._kept) >= self.LIMIT:
            self._kept.clear()
        self._kept[self._last[2]] = value
        self._last = None
