"""What may leave the building: published files hold no internal field, and are served exactly as checked in."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

from . import model as m
from .errors import Diagnostic, PublicationError
from .jsonread import escape_pointer, parse_json


@dataclass(frozen=True)
class Download:
    """A published records file: its served name, exact bytes and their checksum."""

    name: str
    record: str
    data: bytes
    sha256: str

    @property
    def size(self) -> int:
        return len(self.data)


def collect_downloads(records: m.Records) -> tuple[Download, ...]:
    """The files to publish, refusing any that carries an internal field or is not a records file."""
    problems: list[Diagnostic] = []
    downloads = []
    internal = set(records.config.internal_fields)
    for published in records.config.publish:
        source = records.files.get(published.record)
        if source is None:
            problems.append(Diagnostic(published.record, None, None, None, "published record was not loaded", "publish.unknown-record"))
            continue
        doc, parse_problems = parse_json(published.record, source.data)
        if parse_problems:
            problems.extend(parse_problems)
            continue
        for pointer, key in _keys(doc.value, ""):
            if key in internal:
                problems.append(doc.diagnostic(pointer, f'internal field "{key}" must never reach a published file', "publish.internal-field"))
        downloads.append(Download(published.name, published.record, source.data, hashlib.sha256(source.data).hexdigest()))
    if problems:
        raise PublicationError(problems)
    return tuple(sorted(downloads, key=lambda d: d.name))


def _keys(value: object, pointer: str):
    if isinstance(value, dict):
        for key, item in value.items():
            child = f"{pointer}/{escape_pointer(key)}"
            yield child, key
            yield from _keys(item, child)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _keys(item, f"{pointer}/{index}")


def unpublished_mentions(records: m.Records, downloads: tuple[Download, ...]) -> list[Diagnostic]:
    """An unpublished run's id must appear in no published file."""
    hidden = [r.id for r in records.runs if not r.published]
    problems = []
    for download in downloads:
        text = download.data.decode("utf-8")
        for run_id in hidden:
            if json.dumps(run_id) in text:
                problems.append(Diagnostic(download.record, None, None, None,
                                           f'unpublished run "{run_id}" is mentioned in a published file', "publish.unpublished-run"))
    return problems
