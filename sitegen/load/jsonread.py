"""Strict JSON reading with line and column for any JSON pointer, computed only when a problem needs a place."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Iterator

from sitegen.core.errors import Diagnostic
from sitegen.load.repeats import Repeats


class _Duplicate(Exception):
    pass


def _refuse_constant(name: str) -> None:
    raise ValueError(f"{name} is not valid JSON")


def _no_duplicates(pairs: list[tuple[str, object]]) -> dict:
    result = dict(pairs)
    if len(result) != len(pairs):
        raise _Duplicate()
    return result


@dataclass
class JsonText:
    """One parsed file: its value, and a lazily built map from pointers to positions."""

    path: str
    text: str
    value: object = None
    _positions: dict[str, tuple[int, int]] | None = field(default=None, repr=False)

    def position(self, pointer: str) -> tuple[int | None, int | None]:
        if self._positions is None:
            try:
                self._positions = _index_positions(self.text)
            except ValueError:
                self._positions = {}
        # fall back to the nearest ancestor that has a position
        probe = pointer
        while True:
            if probe in self._positions:
                return self._positions[probe]
            if not probe:
                return (None, None)
            probe = probe.rsplit("/", 1)[0]

    def diagnostic(self, pointer: str, message: str, code: str) -> Diagnostic:
        line, column = self.position(pointer)
        return Diagnostic(self.path, line, column, pointer, message, code)


def escape_pointer(token: object) -> str:
    return str(token).replace("~", "~0").replace("/", "~1")


MAX_DEPTH = 64  # no record nests deeper than about ten; the parsers and walkers here recurse once per level
_BRACKETS = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}:,]', re.DOTALL)
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def shallow(value: object) -> bool:
    """Whether arrays and objects nest at most MAX_DEPTH deep; a walk over the containers only, without recursion."""
    stack = [(value, 1)]
    pop, push = stack.pop, stack.append
    while stack:
        node, depth = pop()
        if type(node) is dict:
            node = node.values()
        elif type(node) is not list:
            continue
        if depth > MAX_DEPTH:
            return False
        for item in node:
            if type(item) is dict or type(item) is list:
                push((item, depth + 1))
    return True


def _deep_place(text: str) -> tuple[str, int]:
    """The pointer and offset of the first array or object nested deeper than MAX_DEPTH, found without recursion."""
    stack: list[list] = []  # per open container: [is_object, current key or index, expecting a key]
    for match in _BRACKETS.finditer(text):
        token = match.group(0)
        if token in "[{":
            if len(stack) == MAX_DEPTH:
                return "".join(f"/{escape_pointer(frame[1])}" for frame in stack), match.start()
            stack.append([token == "{", 0 if token == "[" else "", token == "{"])
        elif token in "]}":
            if stack:
                stack.pop()
        elif token == ",":
            if stack:
                frame = stack[-1]
                if frame[0]:
                    frame[2] = True
                else:
                    frame[1] += 1
        elif token == ":":
            pass
        elif stack and stack[-1][0] and stack[-1][2]:
            stack[-1][1], stack[-1][2] = json.loads(token), False
    return "", 0


def _too_deep(path: str, text: str) -> Diagnostic:
    pointer, offset = _deep_place(text)
    line, column = _line_col(text, offset)
    return Diagnostic(path, line, column, pointer, f"arrays and objects nested more than {MAX_DEPTH} deep", "json.too-deep")


def _surrogates(value: object, place: str, shown: str) -> Iterator[tuple[str, str, str]]:
    """(pointer, printable pointer, what) for every key or string holding a lone UTF-16 surrogate, which is no character."""
    if isinstance(value, str):
        if _SURROGATE.search(value):
            yield place, shown, "string"
    elif isinstance(value, dict):
        for key, item in value.items():
            printable = _SURROGATE.sub(lambda m: f"\\u{ord(m.group(0)):04x}", key)
            child, child_shown = f"{place}/{escape_pointer(key)}", f"{shown}/{escape_pointer(printable)}"
            if printable != key:
                yield child, child_shown, "key"
            yield from _surrogates(item, child, child_shown)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _surrogates(item, f"{place}/{index}", f"{shown}/{index}")


def parse_json(path: str, data: bytes) -> tuple[JsonText | None, list[Diagnostic]]:
    """Parse bytes strictly: UTF-8, no duplicate keys, no NaN or Infinity, no lone surrogate, at most MAX_DEPTH deep."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        column = exc.start - (data.rfind(b"\n", 0, exc.start) + 1) + 1
        return None, [Diagnostic(path, line, column, None, "file is not valid UTF-8", "json.encoding")]
    if text.startswith("\ufeff"):
        return None, [Diagnostic(path, 1, 1, None, "file starts with a byte order mark; save it as UTF-8 without BOM", "json.encoding")]
    try:
        value, problems = _syntax(path, text, _no_duplicates)
    except _Duplicate:  # the scanner that places duplicates reads valid JSON only: a later syntax error is said instead
        return None, _syntax(path, text, None)[1] or _find_duplicates(path, text)
    if problems:
        return None, problems
    if not shallow(value):  # the walkers that place problems recurse once per level
        return None, [_too_deep(path, text)]
    doc = JsonText(path, text, value)
    if _SURROGATE_ESCAPE.search(text):
        found = [Diagnostic(path, *doc.position(place), shown, f"{what} holds a lone UTF-16 surrogate (an unpaired "
                            "\\ud800-\\udfff escape), which is not a character", "json.surrogate")
                 for place, shown, what in _surrogates(value, "", "")]
        if found:
            return None, found
    return doc, []


def _locate_constant(text: str) -> tuple[int | None, int | None]:
    # NaN or Infinity, else a number too long for Python to convert ("Exceeds the limit (4300 digits)")
    for match in re.finditer(r"-?\b(NaN|Infinity)\b|[0-9]{4301,}", text):
        return _line_col(text, match.start())
    return (None, None)


def _line_col(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def _syntax(path: str, text: str, pairs) -> tuple[object, list[Diagnostic]]:
    """The text's value (objects made by `pairs`), or where its syntax fails: NaN and Infinity are refused too."""
    try:
        return json.loads(text, object_pairs_hook=pairs, parse_constant=_refuse_constant), []
    except RecursionError:  # brackets that never close, too many for the parser to reach the end and say so
        return None, [_too_deep(path, text)]
    except json.JSONDecodeError as exc:
        return None, [Diagnostic(path, exc.lineno, exc.colno, None, f"malformed JSON: {exc.msg}", "json.syntax")]
    except ValueError as exc:
        line, column = _locate_constant(text)
        return None, [Diagnostic(path, line, column, None, f"malformed JSON: {exc}", "json.syntax")]


def _find_duplicates(path: str, text: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []

    def on_duplicate(pointer: str, key: str, offset: int) -> None:
        line, column = _line_col(text, offset)
        found.append(
            Diagnostic(path, line, column, pointer, f'duplicate key "{key}" (JSON keeps only the last one)', "json.duplicate-key")
        )

    _Scanner(text, on_duplicate).scan()
    return found


_WS = re.compile(r"[ \t\n\r]*")
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][-+]?\d+)?|true|false|null")


def _index_positions(text: str) -> dict[str, tuple[int, int]]:
    positions: dict[str, tuple[int, int]] = {}
    starts: dict[str, int] = {}
    _Scanner(text, None, starts).scan()
    # convert offsets to line/column in one pass over sorted offsets
    line, last = 1, 0
    for pointer, offset in sorted(starts.items(), key=lambda item: item[1]):
        line += text.count("\n", last, offset)
        last = offset
        positions[pointer] = (line, offset - (text.rfind("\n", 0, offset) + 1) + 1)
    return positions


class _Scanner:
    """A small recursive-descent walk over already valid JSON, used only to report places."""

    def __init__(self, text: str, on_duplicate=None, starts: dict[str, int] | None = None):
        self.text = text
        self.on_duplicate = on_duplicate
        self.starts = starts

    def scan(self) -> None:
        self._value(_WS.match(self.text, 0).end(), "")

    def _skip(self, pos: int) -> int:
        return _WS.match(self.text, pos).end()

    def _value(self, pos: int, pointer: str) -> int:
        if self.starts is not None:
            self.starts[pointer] = pos
        char = self.text[pos]
        if char == "{":
            return self._object(pos + 1, pointer)
        if char == "[":
            return self._array(pos + 1, pointer)
        if char == '"':
            match = _STRING.match(self.text, pos)
        else:
            match = _SCALAR.match(self.text, pos)
        if not match:
            raise ValueError(f"unexpected character at offset {pos}")
        return match.end()

    def _object(self, pos: int, pointer: str) -> int:
        seen: set[str] = set()
        pos = self._skip(pos)
        if self.text[pos] == "}":
            return pos + 1
        while True:
            pos = self._skip(pos)
            match = _STRING.match(self.text, pos)
            if not match:
                raise ValueError(f"expected a key at offset {pos}")
            key = json.loads(match.group(0))
            child = f"{pointer}/{escape_pointer(key)}"
            if key in seen and self.on_duplicate:
                self.on_duplicate(child, key, pos)
            seen.add(key)
            pos = self._skip(match.end())
            pos = self._skip(pos + 1)  # the colon
            pos = self._skip(self._value(pos, child))
            if self.text[pos] == ",":
                pos += 1
                continue
            return pos + 1

    def _array(self, pos: int, pointer: str) -> int:
        pos = self._skip(pos)
        if self.text[pos] == "]":
            return pos + 1
        index = 0
        while True:
            pos = self._skip(pos)
            pos = self._skip(self._value(pos, f"{pointer}/{index}"))
            index += 1
            if self.text[pos] == ",":
                pos += 1
                continue
            return pos + 1


class NotStreamable(Exception):
    """The text is not a plain valid object at the top: the caller parses it whole to say exactly what is wrong."""


_DECODER = json.JSONDecoder(object_pairs_hook=_no_duplicates, parse_constant=_refuse_constant)


def iter_json_items(doc: JsonText, key: str, repeats: Repeats | None = None) -> Iterator[tuple[int, object]]:
    """The items of the array under top-level `key`, parsed one at a time, as strictly as parse_json.

    A large records file is one object holding one long array; parsing it whole would hold every item's tree at
    once. Here only one item is alive at a time; the other top-level members land in `doc.value`. Raises
    NotStreamable at anything unusual (bad syntax, a duplicate key, NaN), and the caller falls back to parse_json.
    With `repeats`, an item that repeats a kept one's text but for its leading members comes as a Repeat, undecoded.
    """
    text, skip = doc.text, _WS.match
    if _SURROGATE_ESCAPE.search(text):
        raise NotStreamable()  # parse_json says where the lone surrogate stands
    members: dict[str, object] = {}
    doc.value = members
    try:
        pos = skip(text, 0).end()
        if text[pos] != "{":
            raise NotStreamable()
        pos = skip(text, pos + 1).end()
        while text[pos] != "}" or members:
            if text[pos] != '"':
                raise NotStreamable()
            name, pos = json.decoder.scanstring(text, pos + 1)
            pos = skip(text, pos).end()
            if text[pos] != ":" or name in members:
                raise NotStreamable()
            pos = skip(text, pos + 1).end()
            if name == key and text[pos] == "[":
                members[name] = []
                pos = skip(text, pos + 1).end()
                index = 0
                while text[pos] != "]":
                    found = None if repeats is None else repeats.repeat(text, pos)
                    if found is None:
                        item, pos = _DECODER.raw_decode(text, pos)
                        if repeats is not None:
                            repeats.decoded(text, pos)
                    else:
                        item, pos = found
                    yield index, item
                    index += 1
                    pos = skip(text, pos).end()
                    if text[pos] == ",":
                        pos = skip(text, pos + 1).end()
                        if text[pos] == "]":
                            raise NotStreamable()  # a trailing comma
                    elif text[pos] != "]":
                        raise NotStreamable()
                pos += 1
            else:
                members[name], pos = _DECODER.raw_decode(text, pos)
            pos = skip(text, pos).end()
            if text[pos] == ",":
                pos = skip(text, pos + 1).end()
                continue
            if text[pos] != "}":
                raise NotStreamable()
            break
        if skip(text, pos + 1).end() != len(text):
            raise NotStreamable()
    except (IndexError, ValueError, RecursionError, _Duplicate):
        raise NotStreamable() from None


def read_json_text(path: str, data: bytes) -> tuple[JsonText | None, list[Diagnostic]]:
    """Decode the bytes only (UTF-8, no byte order mark), for iter_json_items; parse_json reports anything else."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return parse_json(path, data)
    if text.startswith("\ufeff"):
        return parse_json(path, data)
    return JsonText(path, text), []
