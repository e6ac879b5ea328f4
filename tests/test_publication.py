"""What may leave the building: published files are the exact bytes checked in, and no internal field slips out."""

import dataclasses
import hashlib
import json
from pathlib import Path

import pytest

import sitegen.publish.downloads as publication
from sitegen.core import model as m
from sitegen.core.errors import PublicationError
from sitegen.load.records import load_records

RECORDS = Path(__file__).resolve().parent.parent / "records"


@pytest.fixture(scope="module")
def records():
    return load_records(RECORDS)


def test_downloads_are_the_files_as_checked_in(records):
    downloads = publication.collect_downloads(records)
    assert downloads
    for d in downloads:
        data = (RECORDS / d.record).read_bytes()
        assert d.data == data and d.size == len(data) and d.sha256 == hashlib.sha256(data).hexdigest()


def test_files_that_cannot_hold_an_internal_key_are_not_parsed_whole(records, monkeypatch):
    def refuse(path, data):
        raise AssertionError(f"{path} was parsed whole")

    monkeypatch.setattr(publication, "parse_json", refuse)
    assert publication.collect_downloads(records)


def _with_file(records: m.Records, folder: Path, name: str, data: bytes) -> m.Records:
    """The records with the published file `name` replaced by `data`, written below `folder`."""
    path = folder / name
    path.write_bytes(data)
    files = dict(records.files)
    files[name] = m.SourceFile(str(path), hashlib.sha256(data).hexdigest(), len(data))
    return dataclasses.replace(records, files=files)


@pytest.mark.parametrize("written", ['"cost"', '"\\u0063ost"'])
def test_an_internal_key_is_found_however_it_is_written(records, tmp_path, written):
    published = records.config.publish[0].record
    value = json.loads((RECORDS / published).read_text(encoding="utf-8"))
    text = json.dumps(value, ensure_ascii=False, indent=2)
    assert text.startswith("{\n")
    data = ("{\n  " + written + ": 12,\n" + text[2:]).encode("utf-8")
    assert json.loads(data)["cost"] == 12
    with pytest.raises(PublicationError) as caught:
        publication.collect_downloads(_with_file(records, tmp_path, published, data))
    assert [(d.pointer, d.code) for d in caught.value.diagnostics] == [("/cost", "publish.internal-field")]


def test_a_published_file_naming_an_unpublished_run_is_refused(records, tmp_path):
    hidden = next(r.id for r in records.runs if not r.published)
    published = records.config.publish[0].record
    data = (RECORDS / published).read_bytes().replace(b"{", b'{"note": ' + json.dumps(hidden).encode() + b", ", 1)
    with pytest.raises(PublicationError) as caught:
        publication.collect_downloads(_with_file(records, tmp_path, published, data))
    assert [(d.path, d.code) for d in caught.value.diagnostics] == [(published, "publish.unpublished-run")]
    assert hidden in caught.value.diagnostics[0].message
