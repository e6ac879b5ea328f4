"""The small words of schema checking shared by the reporting validator and the yes/no acceptor: types, formats, patterns."""

from __future__ import annotations

import datetime
import json
import re
from typing import Callable


Report = Callable[[str, str, str], None]  # (pointer, message, code)
# A place in the document as a chain (parent, key); turned into a JSON pointer only when a problem is reported.
Path = tuple | None
Check = Callable[[object, Path, Report], None]


def json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {dict: "object", list: "array", str: "string", type(None): "null"}.get(type(value), type(value).__name__)


TYPE_TEST = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
}
TYPE_WORD = {"object": "an object", "array": "an array", "integer": "an integer", "string": "a string", "boolean": "a boolean",
              "null": "null", "number": "a number"}


def describe(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def format_of(schema: dict) -> str | None:
    """The one format the records use ("date"); any other is refused, not ignored, like an unknown keyword."""
    found = schema.get("format")
    if found not in (None, "date"):
        raise ValueError(f"schema format not supported by sitegen's validator: {found!r}")
    return found


def compile_pattern(pattern: str) -> re.Pattern:
    """A schema `pattern` as JSON Schema (ECMA-262) reads it: `$` is the end of the text, not also before a final newline.

    Python's `$` also matches before a last "\\n", so "r1\\n" would pass "^[a-z0-9]+$"; each `$` outside a character
    class becomes `\\Z`. Matched with search, as JSON Schema does: a pattern not anchored matches anywhere.
    """
    out, in_class, index = [], False, 0
    while index < len(pattern):
        char = pattern[index]
        if char == "\\":
            out.append(pattern[index : index + 2])
            index += 2
            continue
        if in_class:
            in_class = char != "]" or out[-1] == "["
        elif char == "[":
            in_class = True
        elif char == "$":
            char = r"\Z"
        out.append(char)
        index += 1
    return re.compile("".join(out))


_DATE_FORM = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")


def is_calendar_date(value: str) -> bool:
    """A real day written YYYY-MM-DD: 2026-02-30 is refused, and so are the other ISO forms Python reads (2026-W48-7)."""
    if not _DATE_FORM.fullmatch(value):
        return False
    try:
        datetime.date.fromisoformat(value)
    except ValueError:
        return False
    return True
