"""Published records files are copied and checked a piece at a time, never held whole, and a file changed since it was
loaded is refused with the previous site left as it was."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

import sitegen.core.files as files
from sitegen.core.errors import PublicationError
from sitegen.core.files import SourceFile, file_sha256
from sitegen.publish.site import write_site
from sitegen.render.pages import Page

PAGES = (Page("index.html", b"<!DOCTYPE html><title>x</title>"),)


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def source(path: Path, data: bytes) -> SourceFile:
    path.write_bytes(data)
    return SourceFile(str(path), hashlib.sha256(data).hexdigest(), len(data))


def _whole(self):
    raise AssertionError("a published file was read whole")


def test_a_records_file_is_copied_piece_by_piece_exactly_and_never_read_whole(tmp_path, monkeypatch):
    data = bytes(range(256)) * 41 + "åäö\r\n".encode()  # many pieces, the last a short one
    results = source(tmp_path / "results.json", data)
    monkeypatch.setattr(files, "CHUNK", 100)
    monkeypatch.setattr(SourceFile, "data", property(_whole))
    out = tmp_path / "site"
    manifest = write_site(PAGES, out, published=(("results.json", results),))
    assert (out / "downloads" / "results.json").read_bytes() == data
    assert (out / "downloads" / "SHA256SUMS").read_text() == f"{hashlib.sha256(data).hexdigest()}  results.json\n"
    [written] = [f for f in manifest.files if f.path == "downloads/results.json"]
    assert (written.size, written.sha256) == (len(data), hashlib.sha256(data).hexdigest())


def test_a_records_file_changed_since_it_was_loaded_is_refused_and_the_previous_site_stays(tmp_path, monkeypatch):
    results = source(tmp_path / "results.json", b'{"runs": []}\n')
    out = tmp_path / "site"
    write_site(PAGES, out, published=())  # (a previous site holding these very bytes would be linked, not read)
    before = tree(out)
    (tmp_path / "results.json").write_bytes(b'{"runs": ["edited"]}\n')  # after loading, before this build writes it
    monkeypatch.setattr(files, "CHUNK", 4)
    with pytest.raises(PublicationError) as caught:
        write_site((Page("index.html", b"<p>new</p>"),), out, published=(("results.json", results),))
    [problem] = caught.value.diagnostics
    assert (problem.path, problem.code) == (str(tmp_path / "results.json"), "record.changed")
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["results.json", "site"], "nothing staged is left behind"


def test_file_sha256_reads_from_a_path_or_an_open_file_where_it_stands(tmp_path):
    (tmp_path / "f").write_bytes(b"head:body")
    assert file_sha256(tmp_path / "f") == hashlib.sha256(b"head:body").hexdigest()
    with open(tmp_path / "f", "rb") as opened:
        opened.read(5)
        assert file_sha256(opened) == hashlib.sha256(b"body").hexdigest()


@pytest.mark.parametrize("chunk", [1, 2, 3, 5, 7, 64])
def test_an_internal_field_or_unpublished_run_split_between_pieces_is_still_found(tmp_path, monkeypatch, chunk):
    """The check for what may not be published reads a file a piece at a time: a key or run id that a piece boundary cuts
    must be found all the same, whatever the pieces' size."""
    from sitegen.publish.downloads import _refusals

    monkeypatch.setattr(files, "CHUNK", chunk)
    monkeypatch.setattr(SourceFile, "data", property(lambda self: Path(self.path).read_bytes()))  # parsing reads it whole
    clean = source(tmp_path / "clean.json", b'{"runs": [{"id": "r1", "cost": 1}]}')
    assert _refusals("clean.json", clean, {"secret_cost"}, ["r9"]) == []
    leaking = source(tmp_path / "leaking.json", b'{"runs": [{"id": "r9", "secret_cost": 1}]}')
    codes = sorted(p.code for p in _refusals("leaking.json", leaking, {"secret_cost"}, ["r9"]))
    assert codes == ["publish.internal-field", "publish.unpublished-run"]
    escaped = source(tmp_path / "escaped.json", b'{"runs": [{"id": "r1", "secret_\\u0063ost": 1}]}')
    assert [p.code for p in _refusals("escaped.json", escaped, {"secret_cost"}, ["r9"])] == ["publish.internal-field"]
