"""A schema written out as generated Python for a fast yes/no test; only a document it refuses goes through the reporting closures."""

from __future__ import annotations

import json
from typing import Callable

from sitegen.load.schemabasics import compile_pattern, format_of, is_calendar_date
from sitegen.load.schemacompiler import Compiler


class Accepting:
    """A schema's compiled yes/no test; each `fresh()` copy has its own memory of the strings that matched a pattern."""

    def __init__(self, code, names: dict[str, object], memos: tuple[str, ...], entry: str):
        self._code, self._names, self._memos, self._entry = code, names, memos, entry

    def fresh(self) -> Callable[[object], bool]:
        """A test whose memory lives as long as it does: the caller keeps one for a file, not for the process."""
        namespace: dict[str, object] = dict(self._names)
        namespace.update((name, set()) for name in self._memos)
        exec(self._code, namespace)
        test = namespace[self._entry]

        def accepts(value: object) -> bool:
            try:
                return test(value)
            except Exception:  # a shape the test did not foresee: let the closures judge it
                return False

        return accepts


class Acceptor:
    """Writes one schema out as plain Python source for a yes/no test, so a valid document is accepted fast.

    The reporting closures above pay for their pointers and messages at every node; nearly every document is
    valid, so it is first run through this generated test, and only a document it does not accept goes through
    the closures, which then say what is wrong. The test is never more lenient than the closures: anything it
    does not know makes it answer no.
    """

    def __init__(self, compiler: Compiler):
        self.compiler = compiler
        self.names: dict[str, object] = {}
        self.functions: list[str] = []
        self.refs: dict[str, str] = {}
        self.count = 0
        self.memos: dict[str, str] = {}  # pattern -> the name of its test, which remembers the strings it matched
        self.inlining: list[str] = []

    def fresh_name(self) -> str:
        self.count += 1
        return f"f{self.count}"

    _TYPE_EXPRESSION = {"object": "type({0}) is dict", "array": "type({0}) is list", "string": "type({0}) is str",
                        "boolean": "type({0}) is bool", "null": "{0} is None", "integer": "type({0}) is int",
                        "number": "type({0}) in (int, float)"}  # as TYPE_TEST

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

    def build(self, schema: dict) -> Accepting:
        entry = self.function(schema)
        # source written here from the shipped schema only, never from records
        code = compile("\n".join(self.functions), "<schema test>", "exec")
        return Accepting(code, dict(self.names), tuple(f"seen_{name}" for name in self.memos.values()), entry)

    def matches(self, pattern: str, var: str) -> str:
        """An expression true when `var` matches the pattern; each string matched once is then known by a set lookup.

        Ids, rule names and traces recur in every answer, and a pattern search costs several times a lookup.
        """
        name = self.memos.get(pattern)
        if name is None:
            name = self.memos[pattern] = f"p{len(self.memos)}"
            regex = self.constant(compile_pattern(pattern))
            self.functions.append("\n".join([
                f"def {name}(x):", f"    if {regex}.search(x) is not None:", f"        seen_{name}.add(x)", "        return True",
                "    return False"]))
        return f"({var} in seen_{name} or {name}({var}))"

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
        outer, self.inlining = self.inlining, []  # the refs being written out inline: one that refers to itself is called
        lines = [f"def {name}(v):"]
        lines += ["    " + line for line in self.statements(schema, "v")]
        lines.append("    return True")
        self.inlining = outer
        self.functions.append("\n".join(lines))

    def fresh_var(self, stem: str) -> str:
        self.count += 1
        return f"{stem}{self.count}"

    def check(self, schema: dict, var: str) -> list[str]:
        """Lines that return False when `var` fails `schema`, a nested object or array written out inline: a failure
        anywhere fails the whole test, so the checks of an answer and of its findings need no call per object."""
        if "$ref" in schema:
            ref = schema["$ref"]
            if ref in self.inlining or ref in self.refs:
                return [f"if not {self.function(schema)}({var}):", "    return False"]
            self.inlining.append(ref)
            lines = self.statements(self.compiler.resolve(schema), var)
            self.inlining.pop()
            return lines
        if "oneOf" in schema or "properties" in schema or "items" in schema or "required" in schema \
                or "additionalProperties" in schema:
            return self.statements(schema, var)
        return [f"if not {self.test(schema, var)}:", "    return False"]

    def test(self, schema: dict, var: str) -> str:
        """An expression that is true when `var` passes `schema`."""
        if "$ref" in schema or "oneOf" in schema or "properties" in schema or "items" in schema or "required" in schema \
                or "additionalProperties" in schema:
            return f"{self.function(schema)}({var})"
        if set(schema) - Compiler.KNOWN:
            return "False"
        if "const" in schema:
            return f"{var} == {self.constant(schema['const'])}"
        if "enum" in schema:
            allowed = self.constant(frozenset(schema["enum"]))
            if all(type(choice) is str for choice in schema["enum"]):  # only a string equals a string
                return f"(type({var}) is str and {var} in {allowed})"
            return f"(not isinstance({var}, (dict, list, bool)) and {var} in {allowed})"
        parts = []
        if "type" in schema:
            parts.append(self.type_expression(schema, var))
        if "minLength" in schema:
            parts.append(f"len({var}) >= {int(schema['minLength'])}")
        if "maxLength" in schema:
            if schema.get("type") == "string":  # the type test before it passed
                parts.append(f"len({var}) <= {int(schema['maxLength'])}")
            else:
                parts.append(f"(type({var}) is not str or len({var}) <= {int(schema['maxLength'])})")
        if "pattern" in schema:
            parts.append(self.matches(schema["pattern"], var))
        if "minimum" in schema:
            parts.append(f"{var} >= {self.constant(schema['minimum'])}")
        if "maximum" in schema:
            parts.append(f"{var} <= {self.constant(schema['maximum'])}")
        if format_of(schema) == "date":
            parts.append(f"{self.constant(is_calendar_date)}({var})")
        if "minItems" in schema or "maxItems" in schema or "uniqueItems" in schema or "minProperties" in schema \
                or "propertyNames" in schema:
            return f"{self.function(schema)}({var})"
        return "(" + " and ".join(parts) + ")" if parts else "True"

    def statements(self, schema: dict, v: str) -> list[str]:
        """Lines that return False when `v` fails `schema` (a generated function's body, or a part of one)."""
        if set(schema) - Compiler.KNOWN:
            return ["return False"]
        if "oneOf" in schema:
            lines = []
            for option in schema["oneOf"]:  # the first option whose type fits decides, as in the reporting closures
                lines += [f"{'elif' if lines else 'if'} {self.type_expression(option, v)}:"]
                lines += ["    " + line for line in self.check(option, v) or ["pass"]]
            return lines + ["else:", "    return False"]
        if "const" in schema or "enum" in schema:
            return [f"if not {self.test(schema, v)}:", "    return False"]
        lines = []
        if "type" in schema:
            lines += [f"if not {self.type_expression(schema, v)}:", "    return False"]
        if "properties" in schema or "additionalProperties" in schema or "required" in schema:
            lines += self.object_lines(schema, v)
        elif "items" in schema or "minItems" in schema:
            lines += self.array_lines(schema, v)
        else:
            scalar = {k: schema[k] for k in ("minLength", "maxLength", "pattern", "minimum", "maximum", "format") if k in schema}
            if scalar:
                lines += [f"if not {self.test(scalar, v)}:", "    return False"]
        return lines

    def object_lines(self, schema: dict, v: str) -> list[str]:
        lines = []
        required = schema.get("required", ())
        properties = schema.get("properties", {})
        extra = schema.get("additionalProperties", True)
        exact = extra is False and frozenset(required) == frozenset(properties)  # every field required, no other allowed
        if exact:
            lines += [f"if {v}.keys() != {self.constant(frozenset(properties))}:", "    return False"]
        elif required:
            lines += [f"if not {self.constant(frozenset(required))} <= {v}.keys():", "    return False"]
        if "minProperties" in schema:
            lines += [f"if len({v}) < {int(schema['minProperties'])}:", "    return False"]
        names = schema.get("propertyNames")
        if names is not None:
            if "enum" not in names:
                return ["return False"]
            lines += [f"if not {self.constant(frozenset(names['enum']))} >= {v}.keys():", "    return False"]
        # each property looked up by its name, not each key compared with every name: a record's objects are checked by
        # the hundred thousand, and a finding has ten properties
        if extra is False and not exact:
            lines += [f"if not {v}.keys() <= {self.constant(frozenset(properties))}:", "    return False"]
        for key, sub in properties.items():
            name, x = self.constant(key), self.fresh_var("x")
            if key in required:
                lines += [f"{x} = {v}[{name}]"] + self.check(sub, x)
            else:
                lines += [f"if {name} in {v}:", f"    {x} = {v}[{name}]"] + ["    " + line for line in self.check(sub, x)]
        if isinstance(extra, dict):
            others = f"{v}.keys() - {self.constant(frozenset(properties))}" if properties else f"{v}.keys()"
            key, x = self.fresh_var("key"), self.fresh_var("x")
            lines += [f"for {key} in {others}:", f"    {x} = {v}[{key}]"] + ["    " + line for line in self.check(extra, x)]
        return lines

    def array_lines(self, schema: dict, v: str) -> list[str]:
        lines = []
        if "minItems" in schema:
            lines += [f"if len({v}) < {int(schema['minItems'])}:", "    return False"]
        if "maxItems" in schema:
            lines += [f"if len({v}) > {int(schema['maxItems'])}:", "    return False"]
        if "items" in schema:
            x = self.fresh_var("x")
            lines += [f"for {x} in {v}:"] + ["    " + line for line in self.check(schema["items"], x) or ["pass"]]
        if schema.get("uniqueItems"):
            dumps = self.constant(json.dumps)
            lines += [f"if len({v}) > 1 and len({{x if type(x) is str else {dumps}(x, sort_keys=True) for x in {v}}}) != len({v}):",
                      "    return False"]
        return lines
