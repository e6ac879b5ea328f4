"""What a build wrote is kept packed, a row per file, and read back exactly: the next build's index and stamp come from it."""

from __future__ import annotations

import hashlib

import pytest

import sitegen.publish.site as site_module
from sitegen.core.errors import PublicationError
from sitegen.core.model import InMemoryFile
from sitegen.publish.manifest import FileRows, SiteFile, SiteFiles
from sitegen.publish.site import write_site
from sitegen.render.pages import Page


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


FILES = (
    SiteFile("sv/cases/c-2/index.html", 5120, _digest("a"), _digest("key a"), (5120, 2049, 77, 1_733_000_000_123_456_789)),
    SiteFile("downloads/SHA256SUMS", 0, _digest(""), "", (0, 18446744073709551615, 2**63, -1)),  # no key; extreme stat values
    SiteFile("en/cases/c-1/r-1.html", 1, _digest("b"), _digest("key b"), None),  # no `made`: the site is listed instead
    SiteFile("index.html", 2**40, _digest("c"), "", (3, 1, 2, 0)),  # `made` with another size than the file's
    SiteFile("sv/fall/\u00e5\u00e4\u00f6-\U0001f600/sida.html", 7, _digest("d"), _digest("key d"), (7, 9, 9, 9)),
)


def _exact(files) -> list[tuple]:
    """Every field, `made` included (SiteFile's own comparison leaves it out)."""
    return [(f.path, f.size, f.sha256, f.key, f.made) for f in files]


def test_rows_give_back_every_file_exactly_sorted_by_path():
    rows = FileRows()
    for file in FILES:
        rows.add(file)
    assert len(rows) == len(FILES)
    files, twice = rows.finish()
    assert twice == ()
    assert len(files) == len(FILES)
    assert _exact(files) == sorted(_exact(FILES)), "paths sorted as Python sorts text; size, digests, key and `made` unchanged"
    assert all(type(f) is SiteFile for f in files)
    assert _exact(files) == _exact(files), "read back as often as asked"


def test_paths_given_more_than_once_are_all_named_once_each():
    rows = FileRows()
    for file in (*FILES, FILES[2], FILES[0], FILES[0]):
        rows.add(file)
    files, twice = rows.finish()
    assert twice == tuple(sorted({FILES[0].path, FILES[2].path}))
    assert len(files) == len(FILES) + 3


def test_a_row_is_a_fraction_of_a_file_object():
    """The main process keeps a row per page (228,000 at 10,000 case versions): its digests are packed as 32 bytes each and
    no object is kept per file."""
    rows = FileRows()
    for file in FILES:
        rows.add(file)
    files, _ = rows.finish()
    paths = sum(len(f.path.encode()) for f in FILES)
    assert len(files._rows) + len(files._paths) <= paths + 110 * len(FILES)
    assert type(files._rows) is bytes and type(files._paths) is bytes


@pytest.mark.parametrize("sha256, key", [
    (_digest("a").upper(), ""),  # would come back in lower case
    (_digest("a")[:-1], ""),
    (_digest("a"), "not a digest"),
])
def test_a_digest_that_would_not_come_back_the_same_is_refused(sha256, key):
    with pytest.raises(ValueError):
        FileRows().add(SiteFile("index.html", 1, sha256, key))


def test_files_compare_as_site_files_do_without_made():
    def finished(files):
        rows = FileRows()
        for file in files:
            rows.add(file)
        return rows.finish()[0]

    moved = [SiteFile(f.path, f.size, f.sha256, f.key, (1, 2, 3, 4)) for f in FILES]
    assert finished(FILES) == finished(moved)
    assert finished(FILES) != finished(FILES[:-1])
    assert finished(()) == SiteFiles() and len(SiteFiles()) == 0


def test_write_site_names_every_path_written_twice_in_one_error_and_leaves_nothing(tmp_path):
    out = tmp_path / "site"
    pages = (Page("b.html", b"1"), Page("a.html", b"2"))
    with pytest.raises(PublicationError) as caught:
        with site_module.staging(out) as folder:
            write = site_module.PageWriter(folder)
            write_site([write(page) for page in (*pages, *pages, pages[0])], out,
                       published=(("x.json", InMemoryFile(b"{}")),), staged=folder)
    assert [(d.path, d.code) for d in caught.value.diagnostics] == [("a.html", "site.duplicate-path"), ("b.html", "site.duplicate-path")]
    assert list(tmp_path.iterdir()) == []


def test_the_manifest_of_a_written_site_is_what_its_files_are(tmp_path):
    out = tmp_path / "site"
    pages = (Page("index.html", b"<p>x</p>"), Page("sv/index.html", "<p>\u00e5</p>".encode()))
    manifest = write_site(pages, out, published=(("x.json", InMemoryFile(b"{}")),))
    on_disk = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if p.is_file())
    assert [f.path for f in manifest.files] == on_disk
    for file in manifest.files:
        data = (out / file.path).read_bytes()
        info = (out / file.path).stat()
        assert (file.size, file.sha256) == (len(data), hashlib.sha256(data).hexdigest())
        assert file.made == (info.st_size, info.st_dev, info.st_ino, info.st_mtime_ns)
