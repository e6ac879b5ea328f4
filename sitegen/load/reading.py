"""The reading every records file shares: strict JSON, its schema, and problems gathered to fail once with all of them."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Callable

from sitegen.core import model as m
from sitegen.core.files import read_regular
from sitegen.core.errors import Diagnostic, RecordsError
from sitegen.load.jsonread import JsonText, parse_json
from sitegen.load.schema import validate


class Collector:
    """Gathers diagnostics from every file so the loader can fail once, with all of them."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def at(self, doc: JsonText, pointer: str, message: str, code: str) -> None:
        self.diagnostics.append(doc.diagnostic(pointer, message, code))

    def file(self, path: str, message: str, code: str) -> None:
        self.diagnostics.append(Diagnostic(path, None, None, None, message, code))

    def unreadable(self, path: str, error: OSError) -> None:
        """A records file that is there but cannot be read (no permission, a folder, a named pipe: core/files.open_regular)."""
        self.file(path, f"cannot read file: {error.strerror}", "record.file-unreadable")


def read_file(root: Path, name: str, schema: str, out: Collector, files: dict[str, m.SourceFile], *,
          internal: frozenset[str] = frozenset(), checked: Callable[[object], object] | None = None) -> JsonText | None:
    """One records file read, parsed strictly and checked against its schema (or `checked` of its value is: a stand-in
    with the same places); None, with the problems in `out`, when any of that fails."""
    path = root / name
    shown = str(path)
    try:
        data = read_regular(path)
    except FileNotFoundError:
        out.file(shown, f"file is missing (expected the {schema} records here)", "record.file-missing")
        return None
    except OSError as exc:
        out.unreadable(shown, exc)
        return None
    files[name] = m.SourceFile(shown, hashlib.sha256(data).hexdigest(), len(data))
    doc, problems = parse_json(shown, data)
    if problems:
        out.diagnostics.extend(problems)
        return None
    before = len(out.diagnostics)

    def report(pointer: str, message: str, code: str) -> None:
        key = pointer.rsplit("/", 1)[-1]
        if code == "record.unknown-field" and key in internal:
            message, code = f'internal field "{key}" must never reach a published file', "publish.internal-field"
        out.at(doc, pointer, message, code)

    validate(schema, checked(doc.value) if checked else doc.value, report)
    return doc if len(out.diagnostics) == before else None


def require_folder(root: Path) -> None:
    if not root.is_dir():
        said = "records folder does not exist" if not root.exists() else "is not a folder: name the records folder"
        raise RecordsError([Diagnostic(str(root), None, None, None, said, "record.folder-missing")])


def check_unique_ids(doc: JsonText, items: list, pointer: str, what: str, out: Collector, key=lambda x: x["id"]) -> None:
    seen: dict[object, int] = {}
    for index, item in enumerate(items):
        k = key(item)
        if k in seen:
            shown = k if isinstance(k, str) else " version ".join(str(p) for p in k)
            out.at(doc, f"{pointer}/{index}/id", f'duplicate {what} id "{shown}" (first at {pointer}/{seen[k]})', "record.duplicate-id")
        else:
            seen[k] = index
