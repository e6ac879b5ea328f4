"""A schema compiled into reporting closures that place every problem at its JSON pointer, with a hint for a typo."""

from __future__ import annotations

import json
from typing import Callable

from sitegen.core.errors import did_you_mean
from sitegen.load.schemabasics import TYPE_TEST, TYPE_WORD, Check, compile_pattern, describe, format_of, is_calendar_date, json_type


class Compiler:
    """Turns the subset of JSON Schema the records use into closures; unknown keywords are refused, not ignored."""

    KNOWN = {"$schema", "$id", "title", "description", "$defs", "$ref", "type", "properties", "required", "additionalProperties",
             "minProperties", "propertyNames", "items", "minItems", "maxItems", "uniqueItems", "enum", "const", "pattern",
             "minLength", "maxLength", "minimum", "maximum", "oneOf", "format"}

    def __init__(self, root: dict):
        self.root = root
        self.refs: dict[str, Check] = {}

    def resolve(self, schema: dict) -> dict:
        while "$ref" in schema:
            node = self.root
            for part in schema["$ref"].lstrip("#/").split("/"):
                node = node[part]
            schema = node
        return schema

    def type_names(self, schema: dict) -> str:
        schema = self.resolve(schema)
        expected = schema.get("type")
        if expected is None:
            return "a value"
        types = expected if isinstance(expected, list) else [expected]
        return " or ".join(TYPE_WORD[t] for t in types)

    def type_test(self, schema: dict) -> Callable[[object], bool]:
        schema = self.resolve(schema)
        expected = schema.get("type")
        if expected is None:
            if "const" in schema or "enum" in schema:
                values = [schema["const"]] if "const" in schema else schema["enum"]
                kinds = {json_type(v) for v in values}
                return lambda v: json_type(v) in kinds
            return lambda v: True
        types = expected if isinstance(expected, list) else [expected]
        tests = [TYPE_TEST[t] for t in types]
        return tests[0] if len(tests) == 1 else (lambda v: any(t(v) for t in tests))

    def compile(self, schema: dict) -> Check:
        if "$ref" in schema:
            ref = schema["$ref"]
            if ref not in self.refs:
                self.refs[ref] = lambda v, p, r: compiled(v, p, r)  # placeholder for recursion
                compiled = self.compile(self.resolve(schema))
                self.refs[ref] = compiled
            return self.refs[ref]
        unknown = set(schema) - self.KNOWN
        if unknown:
            raise ValueError(f"schema keyword(s) not supported by sitegen's validator: {sorted(unknown)}")
        if "oneOf" in schema:
            return self._one_of(schema)
        checks: list[Check] = []
        if "const" in schema:
            const = schema["const"]
            checks.append(lambda v, p, r: None if v == const else r(p, f"expected {describe(const)}, found {describe(v)}", "record.value"))
            return self._all(checks)
        if "enum" in schema:
            choices = schema["enum"]
            allowed = frozenset(choices)
            shown = ", ".join(describe(c) for c in choices)

            def enum(v, p, r):
                if isinstance(v, (dict, list)) or isinstance(v, bool) or v not in allowed:
                    r(p, f"expected one of {shown}, found {describe(v)}", "record.value")
                    return False
                return True

            return enum
        test = self.type_test(schema) if "type" in schema else None
        wanted = self.type_names(schema)
        body = self._object(schema) if "properties" in schema or "additionalProperties" in schema or "required" in schema else None
        body = body or (self._array(schema) if "items" in schema or "minItems" in schema else None)
        body = body or self._string(schema)
        body = body or self._number(schema)

        def check(v, p, r):
            if test is not None and not test(v):
                r(p, f"expected {wanted}, found {json_type(v)} {describe(v)}", "record.type")
                return
            if body is not None:
                body(v, p, r)

        return check

    @staticmethod
    def _all(checks: list[Check]) -> Check:
        def check(v, p, r):
            for c in checks:
                c(v, p, r)

        return check

    def _one_of(self, schema: dict) -> Check:
        options = [(self.type_test(s), self.compile(s)) for s in schema["oneOf"]]
        wanted = " or ".join(self.type_names(s) for s in schema["oneOf"])

        def check(v, p, r):
            for test, compiled in options:
                if test(v):
                    compiled(v, p, r)
                    return
            r(p, f"expected {wanted}, found {json_type(v)} {describe(v)}", "record.type")

        return check

    def _object(self, schema: dict) -> Check:
        properties = {k: self.compile(s) for k, s in schema.get("properties", {}).items()}
        required = tuple(schema.get("required", ()))
        extra = schema.get("additionalProperties", True)
        extra_check = self.compile(extra) if isinstance(extra, dict) else None
        min_properties = schema.get("minProperties")
        names = schema.get("propertyNames")
        name_enum = frozenset(names["enum"]) if names and "enum" in names else None

        def check(v, p, r):
            for name in required:
                if name not in v:
                    r(p, f'missing required field "{name}"', "record.missing-field")
            if min_properties is not None and len(v) < min_properties:
                r(p, f"expected at least {min_properties} field(s), found {len(v)}", "record.value")
            for key, item in v.items():
                if name_enum is not None and key not in name_enum:
                    r((p, key), f'unknown key "{key}"{did_you_mean(key, sorted(name_enum))}', "record.unknown-field")
                    continue
                sub = properties.get(key)
                if sub is not None:
                    sub(item, (p, key), r)
                elif extra is False:
                    r((p, key), f'unknown field "{key}"{did_you_mean(key, properties)}', "record.unknown-field")
                elif extra_check is not None:
                    extra_check(item, (p, key), r)

        return check

    def _array(self, schema: dict) -> Check:
        items = self.compile(schema["items"]) if "items" in schema else None
        low, high = schema.get("minItems"), schema.get("maxItems")
        unique = schema.get("uniqueItems", False)

        def check(v, p, r):
            if low is not None and len(v) < low:
                r(p, f"expected at least {low} item(s), found {len(v)}", "record.value")
            if high is not None and len(v) > high:
                r(p, f"expected at most {high} item(s), found {len(v)}", "record.value")
            if items is not None:
                for index, item in enumerate(v):
                    items(item, (p, index), r)
            if unique and len(v) > 1:
                seen: set[str] = set()
                for index, item in enumerate(v):
                    token = item if type(item) is str else json.dumps(item, sort_keys=True)
                    if token in seen:
                        r((p, index), f"duplicate item {describe(item)}", "record.duplicate")
                    seen.add(token)

        return check

    def _string(self, schema: dict) -> Check | None:
        if "pattern" not in schema and "minLength" not in schema and "maxLength" not in schema and "format" not in schema:
            return None
        calendar_date = format_of(schema) == "date"
        min_length, max_length = schema.get("minLength"), schema.get("maxLength")
        pattern = schema.get("pattern")
        compiled = compile_pattern(pattern) if pattern else None
        safe_id = bool(pattern and pattern.startswith("^(?!.*\\.\\.)(?!(?:con|"))
        form = schema.get("description", pattern)

        def check(v, p, r):
            if type(v) is not str:  # string keywords say nothing about other types (a quote may be null)
                return
            if min_length is not None and len(v) < min_length:
                r(p, "expected a non-empty string", "record.value")
            if max_length is not None and len(v) > max_length:
                r(p, f"expected at most {max_length:,} characters, found {len(v):,}", "record.too-long")
                return  # a pattern's message would quote it
            if compiled is not None and not compiled.search(v):
                if safe_id:
                    r(p, f"{describe(v)} is not safe as a file name and URL segment: use lower-case letters, digits and . _ - "
                         "(not first or last, no \"..\"), at most 80 characters, and no name Windows reserves "
                         "(con, prn, aux, nul, com0-9, lpt0-9, with or without an extension)", "record.unsafe-id")
                else:
                    r(p, f"{describe(v)} does not have the expected form: {form}", "record.value")
            elif calendar_date and not is_calendar_date(v):
                r(p, f"{describe(v)} is not a calendar date (YYYY-MM-DD)", "record.date")

        return check

    def _number(self, schema: dict) -> Check | None:
        if "minimum" not in schema and "maximum" not in schema:
            return None
        minimum, maximum = schema.get("minimum"), schema.get("maximum")

        def check(v, p, r):
            if minimum is not None and v < minimum:
                r(p, f"expected a number of at least {minimum}, found {describe(v)}", "record.value")
            if maximum is not None and v > maximum:
                r(p, f"expected a number of at most {maximum:,}, found {describe(v)}", "record.too-large")

        return check
