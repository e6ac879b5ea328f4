"""Checks records against the published JSON Schemas themselves, so the loader and the schemas cannot drift apart."""

from __future__ import annotations

import datetime
import json
import re
from functools import lru_cache
from importlib import resources
from typing import Callable

from sitegen.core.errors import did_you_mean
from sitegen.load.jsonread import escape_pointer

Report = Callable[[str, str, str], None]  # (pointer, message, code)

# A place in the document as a chain (parent, key); turned into a JSON pointer only when a problem is reported.
Path = tuple | None
Check = Callable[[object, Path, Report], None]


@lru_cache(maxsize=None)
def load_schema(name: str) -> dict:
    """The schema shipped in sitegen/schemas/<name>.schema.json."""
    return json.loads(resources.files("sitegen").joinpath(f"schemas/{name}.schema.json").read_text("utf-8"))


def schema_names() -> tuple[str, ...]:
    folder = resources.files("sitegen").joinpath("schemas")
    return tuple(sorted(p.name[: -len(".schema.json")] for p in folder.iterdir() if p.name.endswith(".schema.json")))


def pointer(path: Path) -> str:
    parts = []
    while path is not None:
        path, key = path
        parts.append(escape_pointer(key))
    return "".join("/" + p for p in reversed(parts))


def json_type(value: object) -> str:
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    return {dict: "object", list: "array", str: "string", type(None): "null"}.get(type(value), type(value).__name__)


_TYPE_TEST = {
    "object": lambda v: type(v) is dict,
    "array": lambda v: type(v) is list,
    "string": lambda v: type(v) is str,
    "boolean": lambda v: type(v) is bool,
    "null": lambda v: v is None,
    "integer": lambda v: type(v) is int,
    "number": lambda v: type(v) in (int, float),
}
_TYPE_WORD = {"object": "an object", "array": "an array", "integer": "an integer", "string": "a string", "boolean": "a boolean",
              "null": "null", "number": "a number"}


def _describe(value: object) -> str:
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 40 else text[:37] + "..."


def validate(name: str, value: object, report: Report) -> None:
    """Check a document against the shipped schema `name`, reporting every problem with its JSON pointer."""
    if _accepted(name, None)(value):
        return
    _compiled(name)(value, None, lambda path, message, code: report(pointer(path), message, code))


def validate_item(name: str, key: str, index: int, value: object, report: Report) -> None:
    """Check one item of the array under top-level `key`, for a file read item by item; pointers as with validate."""
    if _accepted(name, key)(value):
        return
    _compiled_item(name, key)(value, ((None, key), index), lambda path, message, code: report(pointer(path), message, code))


def checked_items(doc, schema: str, key: str):
    """The items of a file read item by item (jsonread.iter_json_items), each checked; the first problem stops the stream.

    The caller then reads the file whole, which places every problem exactly as for any other file.
    """
    from sitegen.load.jsonread import NotStreamable, iter_json_items

    def refuse(pointer: str, message: str, code: str) -> None:
        raise NotStreamable()

    for index, item in iter_json_items(doc, key):
        validate_item(schema, key, index, item, refuse)
        yield index, item
    validate(schema, doc.value, refuse)  # the other top-level members, with the array left empty


@lru_cache(maxsize=None)
def _accepted(name: str, key: str | None) -> Callable[[object], bool]:
    """The generated yes/no test of a schema (or of the items under `key`), built once per process."""
    schema = load_schema(name)
    part = schema if key is None else schema["properties"][key]["items"]
    return _Acceptor(_Compiler(schema)).build(part)


@lru_cache(maxsize=None)
def _compiled_item(name: str, key: str) -> Check:
    schema = load_schema(name)
    return _Compiler(schema).compile(schema["properties"][key]["items"])


@lru_cache(maxsize=None)
def _compiled(name: str) -> Check:
    """Each shipped schema is compiled into closures once per process."""
    schema = load_schema(name)
    return _Compiler(schema).compile(schema)


def schema_files() -> tuple[tuple[str, bytes], ...]:
    """The shipped schemas as (name under downloads/, exact bytes), for publication beside the records."""
    folder = resources.files("sitegen").joinpath("schemas")
    return tuple((f"schemas/{name}.schema.json", folder.joinpath(f"{name}.schema.json").read_bytes()) for name in schema_names())


def _format(schema: dict) -> str | None:
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


class _Compiler:
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
        return " or ".join(_TYPE_WORD[t] for t in types)

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
        tests = [_TYPE_TEST[t] for t in types]
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
            checks.append(lambda v, p, r: None if v == const else r(p, f"expected {_describe(const)}, found {_describe(v)}", "record.value"))
            return self._all(checks)
        if "enum" in schema:
            choices = schema["enum"]
            allowed = frozenset(choices)
            shown = ", ".join(_describe(c) for c in choices)

            def enum(v, p, r):
                if isinstance(v, (dict, list)) or isinstance(v, bool) or v not in allowed:
                    r(p, f"expected one of {shown}, found {_describe(v)}", "record.value")
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
                r(p, f"expected {wanted}, found {json_type(v)} {_describe(v)}", "record.type")
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
            r(p, f"expected {wanted}, found {json_type(v)} {_describe(v)}", "record.type")

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
                        r((p, index), f"duplicate item {_describe(item)}", "record.duplicate")
                    seen.add(token)

        return check

    def _string(self, schema: dict) -> Check | None:
        if "pattern" not in schema and "minLength" not in schema and "maxLength" not in schema and "format" not in schema:
            return None
        calendar_date = _format(schema) == "date"
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
                    r(p, f"{_describe(v)} is not safe as a file name and URL segment: use lower-case letters, digits and . _ - "
                         "(not first or last, no \"..\"), at most 80 characters, and no name Windows reserves "
                         "(con, prn, aux, nul, com0-9, lpt0-9, with or without an extension)", "record.unsafe-id")
                else:
                    r(p, f"{_describe(v)} does not have the expected form: {form}", "record.value")
            elif calendar_date and not is_calendar_date(v):
                r(p, f"{_describe(v)} is not a calendar date (YYYY-MM-DD)", "record.date")

        return check

    def _number(self, schema: dict) -> Check | None:
        if "minimum" not in schema and "maximum" not in schema:
            return None
        minimum, maximum = schema.get("minimum"), schema.get("maximum")

        def check(v, p, r):
            if minimum is not None and v < minimum:
                r(p, f"expected a number of at least {minimum}, found {_describe(v)}", "record.value")
            if maximum is not None and v > maximum:
                r(p, f"expected a number of at most {maximum:,}, found {_describe(v)}", "record.too-large")

        return check


class _Acceptor:
    """Writes one schema out as plain Python source for a yes/no test, so a valid document is accepted fast.

    The reporting closures above pay for their pointers and messages at every node; nearly every document is
    valid, so it is first run through this generated test, and only a document it does not accept goes through
    the closures, which then say what is wrong. The test is never more lenient than the closures: anything it
    does not know makes it answer no.
    """

    def __init__(self, compiler: _Compiler):
        self.compiler = compiler
        self.names: dict[str, object] = {}
        self.functions: list[str] = []
        self.refs: dict[str, str] = {}
        self.count = 0

    def fresh_name(self) -> str:
        self.count += 1
        return f"f{self.count}"

    _TYPE_EXPRESSION = {"object": "type({0}) is dict", "array": "type({0}) is list", "string": "type({0}) is str",
                        "boolean": "type({0}) is bool", "null": "{0} is None", "integer": "type({0}) is int",
                        "number": "type({0}) in (int, float)"}  # as _TYPE_TEST

    def type_expression(self, schema: dict, var: str) -> str:
        schema = self.compiler.resolve(schema)
        expected = schema.get("type")
        if expected is None:
            return f"{self.constant(self.compiler.type_test(schema))}({var})"
        types = expected if isinstance(expected, list) else [expected]
        return "(" + " or ".join(self._TYPE_EXPRESSION[t].format(var) for t in types) + ")"

    def constant(self, value: object) -> str:
        name = f"k{len(self.names)}"
        self.names[name] = value
        return name

    def build(self, schema: dict) -> Callable[[object], bool]:
        entry = self.function(schema)
        namespace: dict[str, object] = dict(self.names)
        exec("\n".join(self.functions), namespace)  # source written above from the shipped schema only, never from records
        test = namespace[entry]

        def accepts(value: object) -> bool:
            try:
                return test(value)
            except Exception:  # a shape the test did not foresee: let the closures judge it
                return False

        return accepts

    def function(self, schema: dict) -> str:
        if "$ref" in schema:
            ref = schema["$ref"]
            if ref not in self.refs:
                self.refs[ref] = self.fresh_name()
                self.define(self.refs[ref], self.compiler.resolve(schema))
            return self.refs[ref]
        name = self.fresh_name()
        self.define(name, schema)
        return name

    def define(self, name: str, schema: dict) -> None:
        lines = [f"def {name}(v):"]
        lines += ["    " + line for line in self.statements(schema)]
        lines.append("    return True")
        self.functions.append("\n".join(lines))

    def test(self, schema: dict, var: str) -> str:
        """An expression that is true when `var` passes `schema`."""
        if "$ref" in schema or "oneOf" in schema or "properties" in schema or "items" in schema or "required" in schema \
                or "additionalProperties" in schema:
            return f"{self.function(schema)}({var})"
        if set(schema) - _Compiler.KNOWN:
            return "False"
        if "const" in schema:
            return f"{var} == {self.constant(schema['const'])}"
        if "enum" in schema:
            return f"(not isinstance({var}, (dict, list, bool)) and {var} in {self.constant(frozenset(schema['enum']))})"
        parts = []
        if "type" in schema:
            parts.append(self.type_expression(schema, var))
        if "minLength" in schema:
            parts.append(f"len({var}) >= {int(schema['minLength'])}")
        if "maxLength" in schema:
            parts.append(f"(type({var}) is not str or len({var}) <= {int(schema['maxLength'])})")
        if "pattern" in schema:
            parts.append(f"{self.constant(compile_pattern(schema['pattern']))}.search({var}) is not None")
        if "minimum" in schema:
            parts.append(f"{var} >= {self.constant(schema['minimum'])}")
        if "maximum" in schema:
            parts.append(f"{var} <= {self.constant(schema['maximum'])}")
        if _format(schema) == "date":
            parts.append(f"{self.constant(is_calendar_date)}({var})")
        if "minItems" in schema or "maxItems" in schema or "uniqueItems" in schema or "minProperties" in schema \
                or "propertyNames" in schema:
            return f"{self.function(schema)}({var})"
        return "(" + " and ".join(parts) + ")" if parts else "True"

    def statements(self, schema: dict) -> list[str]:
        """Lines that return False when `v` fails `schema` (the body of a generated function)."""
        if set(schema) - _Compiler.KNOWN:
            return ["return False"]
        if "oneOf" in schema:
            lines = []
            for option in schema["oneOf"]:
                lines += [f"if {self.type_expression(option, 'v')}:", f"    return {self.test(option, 'v')}"]
            return lines + ["return False"]
        if "const" in schema or "enum" in schema:
            return [f"if not {self.test(schema, 'v')}:", "    return False"]
        lines = []
        if "type" in schema:
            lines += [f"if not {self.type_expression(schema, 'v')}:", "    return False"]
        if "properties" in schema or "additionalProperties" in schema or "required" in schema:
            lines += self.object_lines(schema)
        elif "items" in schema or "minItems" in schema:
            lines += self.array_lines(schema)
        else:
            scalar = {k: schema[k] for k in ("minLength", "maxLength", "pattern", "minimum", "maximum", "format") if k in schema}
            if scalar:
                lines += [f"if not {self.test(scalar, 'v')}:", "    return False"]
        return lines

    def object_lines(self, schema: dict) -> list[str]:
        lines = []
        required = schema.get("required", ())
        if required:
            lines += [f"if not {self.constant(frozenset(required))} <= v.keys():", "    return False"]
        if "minProperties" in schema:
            lines += [f"if len(v) < {int(schema['minProperties'])}:", "    return False"]
        names = schema.get("propertyNames")
        if names is not None:
            if "enum" not in names:
                return ["return False"]
            lines += [f"if not {self.constant(frozenset(names['enum']))} >= v.keys():", "    return False"]
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        lines.append("for key, x in v.items():")
        branch = "if"
        for key, sub in properties.items():
            lines += [f"    {branch} key == {self.constant(key)}:", f"        if not {self.test(sub, 'x')}:", "            return False"]
            branch = "elif"
        if extra is False:
            lines += ["    else:" if properties else "    if True:", "        return False"]
        elif isinstance(extra, dict):
            lines += ["    else:" if properties else "    if True:", f"        if not {self.test(extra, 'x')}:", "            return False"]
        elif not properties:
            lines.append("    pass")
        return lines

    def array_lines(self, schema: dict) -> list[str]:
        lines = []
        if "minItems" in schema:
            lines += [f"if len(v) < {int(schema['minItems'])}:", "    return False"]
        if "maxItems" in schema:
            lines += [f"if len(v) > {int(schema['maxItems'])}:", "    return False"]
        if "items" in schema:
            lines += ["for x in v:", f"    if not {self.test(schema['items'], 'x')}:", "        return False"]
        if schema.get("uniqueItems"):
            dumps = self.constant(json.dumps)
            lines += [f"if len(v) > 1 and len({{x if type(x) is str else {dumps}(x, sort_keys=True) for x in v}}) != len(v):",
                      "    return False"]
        return lines
