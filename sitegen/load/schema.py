"""Checks records against the published JSON Schemas themselves, so the loader and the schemas cannot drift apart."""

from __future__ import annotations

import json
from functools import lru_cache
from importlib import resources
from typing import Callable

from sitegen.load.acceptor import Acceptor, Accepting
from sitegen.load.jsonread import NotStreamable, escape_pointer, iter_json_items
from sitegen.load.repeats import Repeat, Repeats
from sitegen.load.schemabasics import Check, Path, Report
from sitegen.load.schemacompiler import Compiler


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


def validate(name: str, value: object, report: Report) -> None:
    """Check a document against the shipped schema `name`, reporting every problem with its JSON pointer."""
    if _accepted(name, None)(value):
        return
    _compiled(name)(value, None, lambda path, message, code: report(pointer(path), message, code))


def validate_item(name: str, key: str, index: int, value: object, report: Report) -> None:
    """Check one item of the array under top-level `key`, for a file read item by item; pointers as with validate."""
    if _accepted(name, key)(value):
        return
    _report_item(name, key, index, value, report)


def _report_item(name: str, key: str, index: int, value: object, report: Report) -> None:
    _compiled_item(name, key)(value, ((None, key), index), lambda path, message, code: report(pointer(path), message, code))


def checked_items(doc, schema: str, key: str, repeats: Repeats | None = None):
    """The items of a file read item by item (jsonread.iter_json_items), each checked; the first problem stops the stream.

    The caller then reads the file whole, which places every problem exactly as for any other file. With `repeats`
    (repeats_of), an item that repeats a kept one but for its leading members comes as a Repeat, and only those members
    are checked: the rest is the kept item's text, which passed.
    """
    def refuse(pointer: str, message: str, code: str) -> None:
        raise NotStreamable()

    accepts = _accepted(schema, key)  # one test for the file, remembering the strings it matched
    members: dict[str, Callable[[object], bool]] = {}
    for index, item in iter_json_items(doc, key, repeats):
        if type(item) is Repeat:
            for name, value in item.lead.items():
                test = members.get(name) or members.setdefault(name, _accepted_member(schema, key, name))
                if not test(value):
                    raise NotStreamable()
        elif not accepts(item):
            _report_item(schema, key, index, item, refuse)
        yield index, item
    validate(schema, doc.value, refuse)  # the other top-level members, with the array left empty


def repeats_of(schema: str, key: str, leading: tuple[str, ...]) -> Repeats | None:
    """What recognises the items under `key` that repeat a kept one but for the members `leading`, with which they start;
    None when the items' schema does not let those members be checked alone (each a required string or integer of a
    plain object, whose other members the repeated text holds as it held them)."""
    items = load_schema(schema)["properties"][key]["items"]
    if set(items) - {"type", "additionalProperties", "required", "properties"} or items.get("type") != "object":
        return None
    forms = []
    for name in leading:
        form = items.get("properties", {}).get(name, {}).get("type")
        if form not in ("string", "integer") or name not in items.get("required", ()):
            return None
        forms.append((name, form))
    return Repeats(tuple(forms))


def _accepted(name: str, key: str | None) -> Callable[[object], bool]:
    """A fresh copy of the generated yes/no test of a schema (or of the items under `key`), for one document or file."""
    return _acceptance(name, key).fresh()


@lru_cache(maxsize=None)
def _acceptance(name: str, key: str | None) -> Accepting:
    """The generated yes/no test, compiled once per process; what it remembers lives in each fresh copy."""
    schema = load_schema(name)
    part = schema if key is None else schema["properties"][key]["items"]
    return Acceptor(Compiler(schema)).build(part)


def _accepted_member(name: str, key: str, member: str) -> Callable[[object], bool]:
    """The yes/no test of one member of the items under `key`, fresh for one file."""
    return _member_acceptance(name, key, member).fresh()


@lru_cache(maxsize=None)
def _member_acceptance(name: str, key: str, member: str) -> Accepting:
    schema = load_schema(name)
    return Acceptor(Compiler(schema)).build(schema["properties"][key]["items"]["properties"][member])


@lru_cache(maxsize=None)
def _compiled_item(name: str, key: str) -> Check:
    schema = load_schema(name)
    return Compiler(schema).compile(schema["properties"][key]["items"])


@lru_cache(maxsize=None)
def _compiled(name: str) -> Check:
    """Each shipped schema is compiled into closures once per process."""
    schema = load_schema(name)
    return Compiler(schema).compile(schema)


def schema_files(base_url: str) -> tuple[tuple[str, bytes], ...]:
    """The shipped schemas as (name under downloads/, bytes) for publication beside the records, each `$id` the URL it is served at."""
    folder = resources.files("sitegen").joinpath("schemas")
    return tuple((f"schemas/{name}.schema.json", served_schema(folder.joinpath(f"{name}.schema.json").read_bytes(), base_url))
                 for name in schema_names())


def served_schema(data: bytes, base_url: str) -> bytes:
    """A shipped schema as published: its `$id`, the path it is served at below the site (downloads/schemas/…), made absolute.

    Only the `$id` member's value changes, so the loader validates records against exactly what a reader downloads.
    """
    relative = json.loads(data)["$id"]
    member = b'"$id": ' + json.dumps(relative).encode("utf-8")
    if data.count(member) != 1:
        raise ValueError(f"schema {relative} must state its $id once, as {member.decode()}")
    return data.replace(member, b'"$id": ' + json.dumps(base_url + relative, ensure_ascii=False).encode("utf-8"), 1)
