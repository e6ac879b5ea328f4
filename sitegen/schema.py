"""Checks records against the published JSON Schemas themselves, so the loader and the schemas cannot drift apart."""

from __future__ import annotations

import difflib
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Callable

from .jsonread import escape_pointer

Report = Callable[[str, str, str], None]  # (pointer, message, code)

_JSON_TYPES = {
    "object": dict,
    "array": list,
    "string": str,
    "boolean": bool,
    "null": type(None),
}


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """The schema shipped in sitegen/schemas/<name>.schema.json."""
    return json.loads(resources.files("sitegen").joinpath(f"schemas/{name}.schema.json").read_text("utf-8"))


def schema_names() -> tuple[str, ...]:
    folder = resources.files("sitegen").joinpath("schemas")
    return tuple(sorted(p.name[: -len(".schema.json")] for p in folder.iterdir() if p.name.endswith(".schema.json")))


def json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    for name, cls in _JSON_TYPES.items():
        if isinstance(value, cls):
            return name
    return type(value).__name__


def _type_ok(value: object, expected: str) -> bool:
    if expected == "integer":
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    return isinstance(value, _JSON_TYPES[expected])


def _describe(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


class Validator:
    """Walks one document against one schema and reports every problem."""

    def __init__(self, schema: dict, report: Report):
        self.root = schema
        self.report = report
        self._patterns: dict[str, re.Pattern] = {}

    def validate(self, value: object) -> None:
        self._check(value, self.root, "")

    def _resolve(self, schema: dict) -> dict:
        while "$ref" in schema:
            ref = schema["$ref"]
            node = self.root
            for part in ref.lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def _accepts_type(self, schema: dict, value: object) -> bool:
        schema = self._resolve(schema)
        expected = schema.get("type")
        if expected is None:
            return True
        types = expected if isinstance(expected, list) else [expected]
        return any(_type_ok(value, t) for t in types)

    def _check(self, value: object, schema: dict, pointer: str) -> None:
        schema = self._resolve(schema)
        if "oneOf" in schema:
            options = [s for s in schema["oneOf"] if self._accepts_type(s, value)]
            if not options:
                wanted = " or ".join(self._type_names(s) for s in schema["oneOf"])
                self.report(pointer, f"expected {wanted}, found {json_type(value)} {_describe(value)}", "record.type")
                return
            self._check(value, options[0], pointer)
            return
        if "const" in schema and value != schema["const"]:
            self.report(pointer, f"expected {_describe(schema['const'])}, found {_describe(value)}", "record.value")
            return
        if "enum" in schema and value not in schema["enum"]:
            choices = ", ".join(_describe(c) for c in schema["enum"])
            self.report(pointer, f"expected one of {choices}, found {_describe(value)}", "record.value")
            return
        if "type" in schema and not self._accepts_type(schema, value):
            self.report(pointer, f"expected {self._type_names(schema)}, found {json_type(value)} {_describe(value)}", "record.type")
            return
        if isinstance(value, dict):
            self._check_object(value, schema, pointer)
        elif isinstance(value, list):
            self._check_array(value, schema, pointer)
        elif isinstance(value, str):
            self._check_string(value, schema, pointer)
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            if "minimum" in schema and value < schema["minimum"]:
                self.report(pointer, f"expected a number of at least {schema['minimum']}, found {value}", "record.value")

    def _type_names(self, schema: dict) -> str:
        schema = self._resolve(schema)
        expected = schema.get("type", "a value")
        types = expected if isinstance(expected, list) else [expected]
        return " or ".join({"object": "an object", "array": "an array", "integer": "an integer"}.get(t, f"a {t}") for t in types)

    def _check_object(self, value: dict, schema: dict, pointer: str) -> None:
        properties = schema.get("properties", {})
        for name in schema.get("required", ()):
            if name not in value:
                self.report(pointer, f'missing required field "{name}"', "record.missing-field")
        if "minProperties" in schema and len(value) < schema["minProperties"]:
            self.report(pointer, f"expected at least {schema['minProperties']} field(s), found {len(value)}", "record.value")
        extra = schema.get("additionalProperties", True)
        names = schema.get("propertyNames")
        for key, item in value.items():
            child = f"{pointer}/{escape_pointer(key)}"
            if names is not None and "enum" in names and key not in names["enum"]:
                self.report(child, f'unknown key "{key}"{_did_you_mean(key, names["enum"])}', "record.unknown-field")
                continue
            if key in properties:
                self._check(item, properties[key], child)
            elif extra is False:
                self.report(child, f'unknown field "{key}"{_did_you_mean(key, properties)}', "record.unknown-field")
            elif isinstance(extra, dict):
                self._check(item, extra, child)

    def _check_array(self, value: list, schema: dict, pointer: str) -> None:
        if "minItems" in schema and len(value) < schema["minItems"]:
            self.report(pointer, f"expected at least {schema['minItems']} item(s), found {len(value)}", "record.value")
        if "maxItems" in schema and len(value) > schema["maxItems"]:
            self.report(pointer, f"expected at most {schema['maxItems']} item(s), found {len(value)}", "record.value")
        items = schema.get("items")
        if items is not None:
            for index, item in enumerate(value):
                self._check(item, items, f"{pointer}/{index}")
        if schema.get("uniqueItems"):
            seen: set[str] = set()
            for index, item in enumerate(value):
                token = json.dumps(item, sort_keys=True)
                if token in seen:
                    self.report(f"{pointer}/{index}", f"duplicate item {_describe(item)}", "record.duplicate")
                seen.add(token)

    def _check_string(self, value: str, schema: dict, pointer: str) -> None:
        if "minLength" in schema and len(value) < schema["minLength"]:
            self.report(pointer, "expected a non-empty string", "record.value")
        pattern = schema.get("pattern")
        if pattern is not None:
            compiled = self._patterns.get(pattern)
            if compiled is None:
                compiled = self._patterns[pattern] = re.compile(pattern)
            if not compiled.search(value):
                if pattern.startswith("^[a-z0-9]"):
                    self.report(pointer, f"{_describe(value)} is not safe as a file name and URL segment: use lower-case "
                                         "letters, digits and . _ - (not first or last), at most 80 characters", "record.unsafe-id")
                else:
                    self.report(pointer, f"{_describe(value)} does not have the expected form {pattern}", "record.value")


def _did_you_mean(key: str, candidates) -> str:
    close = difflib.get_close_matches(key, list(candidates), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""
