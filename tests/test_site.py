"""Writing the site: published bytes copied exactly, SHA256SUMS that coreutils accepts, an atomic swap, and stable bytes."""

from __future__ import annotations

import errno
import hashlib
import re
import shutil
import subprocess
from pathlib import Path

import pytest

import sitegen.publish.site as site_module
import sitegen.publish.swap as swap_module
from sitegen.core.errors import OutFolderError, PublicationError, WriteError
from sitegen.core.model import InMemoryFile
from sitegen.render.pages import Page
from sitegen.publish.site import MARKER, MARKER_TEXT, check_out_dir, sha256sums, write_site

# Deliberately not canonical JSON: odd spacing, no final newline, non-ASCII, CRLF; a re-serialization would change them.
RESULTS = b'{"format":"sitegen.results/1",  "runs": [ ]\r\n, "note": "\xc3\xa5\xc3\xa4\xc3\xb6"}'
CASES = b'{\n    "format": "sitegen.cases/1"\n}'
SCHEMA = b'{"$schema": "https://json-schema.org/draft/2020-12/schema"}\n'
PUBLISHED = tuple((name, InMemoryFile(data)) for name, data in (
    ("granska-quality-results.json", RESULTS), ("granska-quality-cases.json", CASES), ("schemas/cases.schema.json", SCHEMA)))
PAGES = (Page("index.html", b"<!DOCTYPE html><title>x</title>"), Page("sv/index.html", "<p>Översikt</p>".encode()), Page("static/site.css", b"body{}"))


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def test_published_files_are_copied_byte_for_byte(tmp_path):
    out = tmp_path / "site"
    write_site(PAGES, out, published=PUBLISHED, extra_files=(("changelog.atom", b"<feed/>"),))
    files = tree(out)
    assert files["downloads/granska-quality-results.json"] == RESULTS
    assert files["downloads/granska-quality-cases.json"] == CASES
    assert files["downloads/schemas/cases.schema.json"] == SCHEMA
    assert files["sv/index.html"] == "<p>Översikt</p>".encode()
    assert files["changelog.atom"] == b"<feed/>"


def test_sha256sums_is_coreutils_format_sorted_by_name(tmp_path):
    out = tmp_path / "site"
    write_site(PAGES, out, published=PUBLISHED)
    lines = (out / "downloads" / "SHA256SUMS").read_text().splitlines()
    names = [line.split("  ", 1)[1] for line in lines]
    assert names == sorted(name for name, _ in PUBLISHED)
    for line in lines:
        digest, name = line.split("  ", 1)
        assert re.fullmatch(r"[0-9a-f]{64}", digest)
        assert digest == hashlib.sha256(dict(PUBLISHED)[name].data).hexdigest()


@pytest.mark.skipif(shutil.which("sha256sum") is None, reason="coreutils sha256sum not installed")
def test_sha256sum_check_passes_and_fails_after_one_byte_changes(tmp_path):
    out = tmp_path / "site"
    write_site(PAGES, out, published=PUBLISHED)
    downloads = out / "downloads"
    ok = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=downloads, capture_output=True, text=True)
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert ok.stdout.count(": OK") == len(PUBLISHED)
    target = downloads / "granska-quality-cases.json"
    data = bytearray(target.read_bytes())
    data[3] ^= 0x01
    target.write_bytes(bytes(data))
    bad = subprocess.run(["sha256sum", "-c", "--strict", "SHA256SUMS"], cwd=downloads, capture_output=True, text=True)
    assert bad.returncode != 0
    assert "granska-quality-cases.json: FAILED" in bad.stdout


def test_manifest_lists_every_written_file_with_its_checksum(tmp_path):
    out = tmp_path / "site"
    manifest = write_site(PAGES, out, published=PUBLISHED)
    files = tree(out)
    assert [f.path for f in manifest.files] == sorted(files)
    for item in manifest.files:
        assert item.sha256 == hashlib.sha256(files[item.path]).hexdigest()
        assert item.size == len(files[item.path])


def test_a_failure_while_writing_leaves_the_old_site_byte_identical(tmp_path, monkeypatch):
    out = tmp_path / "site"
    write_site(PAGES, out, published=PUBLISHED)
    before = tree(out)
    calls = {"n": 0}
    real = site_module._written  # every file the writer writes (rather than links) is written by it

    def failing(target, data):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real(target, data)

    def no_link(*args, **kwargs):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(site_module, "_written", failing)
    monkeypatch.setattr(site_module.os, "link", no_link)  # a full disk has no room for a link either: every file is written
    with pytest.raises(WriteError) as caught:
        write_site((Page("index.html", b"new"), *PAGES[1:]), out, published=PUBLISHED)
    monkeypatch.undo()
    [line] = caught.value.lines()
    assert re.fullmatch(rf"{re.escape(str(tmp_path))}/\.site\.tmp-\w+/static/site\.css: error: cannot write: no space left on device; "
                        r"the previous site is untouched \[site\.write-failed\]", line), line
    assert caught.value.exit_code == 1
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]  # no temporary folder left behind


def _rewrite_with_a_rename_refused(tmp_path, monkeypatch, refuse, error: OSError, match: str) -> None:
    """Write a site, then write it again while `refuse(src)` renames fail: the old site stays, nothing is left beside it."""
    out = tmp_path / "site"
    write_site(PAGES, out, published=PUBLISHED)
    before = tree(out)
    real = site_module.os.rename

    def rename(src, dst):
        if refuse(Path(src), out):
            raise error
        return real(src, dst)

    monkeypatch.setattr(swap_module, "exchange", lambda a, b: False)  # the two-rename fallback
    monkeypatch.setattr(site_module.os, "rename", rename)
    with pytest.raises(WriteError) as caught:
        write_site((Page("index.html", b"new"),), out, published=PUBLISHED)
    monkeypatch.undo()
    assert [d.code for d in caught.value.diagnostics] == ["site.write-failed"]
    assert re.search(match, caught.value.diagnostics[0].message), caught.value.diagnostics[0].message
    assert tree(out) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"], "no .site.old- or .site.tmp- folder is left behind"


def test_a_failed_swap_puts_the_old_site_back(tmp_path, monkeypatch):
    _rewrite_with_a_rename_refused(tmp_path, monkeypatch, lambda src, out: ".tmp-" in str(src), OSError("rename refused"), "rename refused")


def test_a_successful_write_replaces_the_old_site_entirely(tmp_path):
    out = tmp_path / "site"
    write_site((*PAGES, Page("en/gone.html", b"old")), out, published=PUBLISHED)
    write_site(PAGES, out, published=PUBLISHED)
    assert "en/gone.html" not in tree(out)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["site"]


def test_unsafe_or_colliding_paths_are_refused_and_leave_nothing_behind(tmp_path):
    out = tmp_path / "site"
    for pages, published in (
        ((Page("../escape.html", b"x"),), ()),
        ((Page("/abs.html", b"x"),), ()),
        ((Page("a.html", b"x"), Page("a.html", b"y")), ()),
        ((Page("downloads/x.json", b"x"),), (("x.json", InMemoryFile(b"x")),)),
        ((), (("SHA256SUMS", InMemoryFile(b"x")),)),
    ):
        with pytest.raises(PublicationError):
            write_site(pages, out, published=published)
    assert not out.exists()
    assert list(tmp_path.iterdir()) == []


def test_writing_twice_gives_identical_bytes(tmp_path):
    write_site(PAGES, tmp_path / "a", published=PUBLISHED)
    write_site(tuple(reversed(PAGES)), tmp_path / "b", published=tuple(reversed(PUBLISHED)))
    assert tree(tmp_path / "a") == tree(tmp_path / "b")


def test_pages_may_come_from_a_generator(tmp_path):
    """A large site is streamed: write_site takes pages one at a time."""
    write_site((page for page in PAGES), tmp_path / "site", published=PUBLISHED)
    assert tree(tmp_path / "site")["sv/index.html"] == PAGES[1].data


def test_sha256sums_of_nothing_is_empty():
    assert sha256sums(()) == b""


# --- the whole site: what the downloads page shows is what was written ----------------------


def test_checksums_on_the_downloads_page_equal_the_written_bytes(tmp_path):
    from test_pages import CONTENT, TEMPLATES, make_records, make_results, translations, verdicts_for

    from sitegen.render.pages import render_pages
    from sitegen.publish.downloads import collect_downloads

    content = tmp_path / "content"
    for lang in ("sv", "en"):
        (content / lang).mkdir(parents=True)
        for name, text in CONTENT.items():
            (content / lang / f"{name}.md").write_text(text, encoding="utf-8")
        for measure in ("GROUNDING", "CLEAN_CASE_FLAWS", "PROHIBITED_OUTPUT", "QUOTE_FIDELITY", "REDUCER_SURVIVAL",
                        "INVARIANT_PAIRS", "IDENTICAL_INPUT_STABILITY"):
            (content / lang / f"measure-{measure}.md").write_text(f"# {measure}\ntext\n", encoding="utf-8")
    records = make_records(tmp_path)
    downloads = tuple((d.name, d.source) for d in collect_downloads(records)) + (("schemas/cases.schema.json", InMemoryFile(SCHEMA)),)
    pages = render_pages(records, make_results(records), verdicts=verdicts_for(records), changelog=None,
                         catalogs=translations(), build_date="", downloads=downloads, templates=TEMPLATES, content_dir=content)
    out = tmp_path / "site"
    write_site(pages, out, published=downloads)
    sums = dict(reversed(line.split("  ", 1)) for line in (out / "downloads" / "SHA256SUMS").read_text().splitlines())
    for lang in ("sv", "en"):
        page = (out / lang / "downloads.html").read_text(encoding="utf-8")
        shown = re.findall(r'href="\.\./downloads/([^"]+)" download>.*?<code class="hash">([0-9a-f]{64})</code>', page, re.S)
        assert shown and len(shown) == len(downloads)
        for name, digest in shown:
            assert digest == sums[name] == hashlib.sha256((out / "downloads" / name).read_bytes()).hexdigest()
    if shutil.which("sha256sum"):
        assert subprocess.run(["sha256sum", "-c", "--strict", "--quiet", "SHA256SUMS"], cwd=out / "downloads").returncode == 0


# --- pages written where they were rendered ---------------------------------------------------


def test_pages_written_by_a_page_writer_give_the_same_site_and_manifest(tmp_path):
    """Worker processes write their pages into the staging folder; write_site only checks them off."""
    direct = write_site(PAGES, tmp_path / "direct", published=PUBLISHED)
    out = tmp_path / "staged"
    with site_module.staging(out) as folder:
        write = site_module.PageWriter(folder)
        staged = write_site([write(page) for page in PAGES], out, published=PUBLISHED, staged=folder)
    assert tree(out) == tree(tmp_path / "direct")
    assert staged.files == direct.files
    assert sorted(p.name for p in tmp_path.iterdir()) == ["direct", "staged"], "no staging folder is left behind"


def test_a_page_written_twice_by_page_writers_is_refused_and_nothing_is_left(tmp_path):
    out = tmp_path / "site"
    with pytest.raises(PublicationError) as caught:
        with site_module.staging(out) as folder:
            write = site_module.PageWriter(folder)
            write_site([write(PAGES[0]), write(PAGES[0])], out, published=PUBLISHED, staged=folder)
    assert [d.code for d in caught.value.diagnostics] == ["site.duplicate-path"]
    assert list(tmp_path.iterdir()) == []


def test_a_page_writer_refuses_a_path_outside_the_site(tmp_path):
    with pytest.raises(PublicationError) as caught:
        site_module.PageWriter(tmp_path / "stage")(Page("../escaped.html", b"x"))
    assert [d.code for d in caught.value.diagnostics] == ["site.unsafe-path"]
    assert not (tmp_path / "escaped.html").exists()


def test_the_staging_folder_goes_when_anything_fails(tmp_path):
    out = tmp_path / "site"
    with pytest.raises(RuntimeError):
        with site_module.staging(out) as folder:
            site_module.PageWriter(folder)(PAGES[1])
            assert (folder / PAGES[1].path).read_bytes() == PAGES[1].data
            raise RuntimeError("rendering failed")
    assert list(tmp_path.iterdir()) == []


def test_a_failed_rename_of_the_old_site_leaves_no_folder_beside_it(tmp_path, monkeypatch):
    """The folder the old site is put aside in goes again when the old site cannot be moved into it."""
    _rewrite_with_a_rename_refused(tmp_path, monkeypatch, lambda src, out: src == out, OSError(16, "Device or resource busy"), "busy")


# --- where a site may be written: only a new path, an empty folder or a site sitegen built ----------


def everything(folder: Path) -> dict[str, bytes | None]:
    """Every entry below folder (folders as None, files with their bytes), hidden ones included."""
    return {p.relative_to(folder).as_posix(): None if p.is_dir() else p.read_bytes() for p in sorted(folder.rglob("*"))}


def _refused(out: Path, code: str, **where) -> str:
    with pytest.raises(OutFolderError) as caught:
        check_out_dir(out, **where)
    (problem,) = caught.value.diagnostics
    assert problem.code == code
    assert problem.path == str(out)
    (line,) = caught.value.lines()
    assert line.startswith(f"{out}: error: ") and line.endswith(f" [{code}]")
    return problem.message


def test_every_site_carries_the_marker_and_only_the_manifest_lists_it(tmp_path):
    out = tmp_path / "site"
    manifest = write_site(PAGES, out, published=PUBLISHED)
    assert (out / MARKER).read_bytes() == MARKER_TEXT
    assert b"\n" == MARKER_TEXT[-1:] and MARKER_TEXT.count(b"\n") == 1, "one fixed line, the same in every build"
    assert manifest.file(MARKER).sha256 == hashlib.sha256(MARKER_TEXT).hexdigest()
    assert MARKER not in (out / "downloads" / "SHA256SUMS").read_text(), "it is no download"
    assert site_module.is_site(out)


def test_a_page_may_not_take_the_markers_place(tmp_path):
    with pytest.raises(PublicationError) as caught:
        write_site((*PAGES, Page(MARKER, MARKER_TEXT)), tmp_path / "site", published=PUBLISHED)
    assert [d.code for d in caught.value.diagnostics] == ["site.duplicate-path"]
    assert list(tmp_path.iterdir()) == []


def test_a_new_path_an_empty_folder_and_a_previous_site_are_accepted(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    assert check_out_dir(tmp_path / "new" / "site", cwd=work) == (tmp_path / "new" / "site").resolve()
    (tmp_path / "empty").mkdir()
    assert check_out_dir(tmp_path / "empty", cwd=work) == (tmp_path / "empty").resolve()
    write_site(PAGES, tmp_path / "site", published=PUBLISHED)
    assert check_out_dir(tmp_path / "site", cwd=work, records_dir=tmp_path / "records") == (tmp_path / "site").resolve()
    assert check_out_dir(work / "sub" / ".." / "site", cwd=work) == work / "site", "the path is resolved first"


@pytest.mark.parametrize("name", [".", "..", "bad/.."])
def test_the_working_folder_and_its_parents_are_refused(tmp_path, monkeypatch, name):
    work = tmp_path / "a" / "work"
    work.mkdir(parents=True)
    monkeypatch.chdir(work)
    before = everything(tmp_path)
    message = _refused(Path(name), "out.working-folder")
    assert "sub-folder" in message
    assert everything(tmp_path) == before


def test_a_folder_holding_the_working_folder_is_refused_even_when_empty_but_for_it(tmp_path):
    work = tmp_path / "a" / "b"
    work.mkdir(parents=True)
    message = _refused(tmp_path / "a", "out.working-folder", cwd=work)
    assert str(work.resolve()) in message


@pytest.mark.parametrize("where", ["data/records", "data/records/site", "data"], ids=["the-records", "inside-them", "holding-them"])
def test_the_records_folder_a_folder_inside_it_and_one_holding_it_are_refused(tmp_path, where):
    records = tmp_path / "data" / "records"
    records.mkdir(parents=True)
    (records / "runs.json").write_bytes(b"{}")
    work = tmp_path / "elsewhere"
    work.mkdir()
    before = everything(tmp_path)
    message = _refused(tmp_path / where, "out.records-folder", records_dir=records, cwd=work)
    assert "records" in message
    assert everything(tmp_path) == before


def test_a_file_and_a_path_below_a_file_are_refused(tmp_path):
    (tmp_path / "site").write_bytes(b"not a folder")
    assert "not a folder" in _refused(tmp_path / "site", "out.not-a-folder", cwd=tmp_path / "elsewhere")
    assert str(tmp_path / "site") in _refused(tmp_path / "site" / "inner", "out.not-a-folder", cwd=tmp_path / "elsewhere")
    assert (tmp_path / "site").read_bytes() == b"not a folder"
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_a_folder_with_files_but_no_marker_is_refused(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "important.txt").write_bytes(b"keep me")
    assert MARKER in _refused(out, "out.not-a-site", cwd=tmp_path / "elsewhere")
    (out / MARKER).write_bytes(b"something else\n")
    _refused(out, "out.not-a-site", cwd=tmp_path / "elsewhere")  # the marker must hold its exact line
    (out / MARKER).unlink()
    (out / MARKER).mkdir()
    _refused(out, "out.not-a-site", cwd=tmp_path / "elsewhere")
    assert (out / "important.txt").read_bytes() == b"keep me"


@pytest.mark.parametrize("kind", ["folder", "file"])
def test_write_site_itself_never_replaces_what_is_not_a_site(tmp_path, kind):
    """Checked once more just before the swap: nothing written into the staging folder reaches the target."""
    out = tmp_path / "mine"
    if kind == "folder":
        out.mkdir()
        (out / "important.txt").write_bytes(b"keep me")
    else:
        out.write_bytes(b"keep me")
    before = everything(tmp_path)
    with pytest.raises(OutFolderError) as caught:
        write_site(PAGES, out, published=PUBLISHED)
    assert [d.code for d in caught.value.diagnostics] == ["out.not-a-site" if kind == "folder" else "out.not-a-folder"]
    assert everything(tmp_path) == before, "the target is untouched and no staging folder is left"


def test_writing_into_an_empty_folder_and_over_a_previous_site_works(tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    write_site((*PAGES, Page("en/gone.html", b"old")), out, published=PUBLISHED)
    assert tree(out)["en/gone.html"] == b"old"
    write_site(PAGES, out, published=PUBLISHED)
    assert "en/gone.html" not in tree(out) and (out / MARKER).read_bytes() == MARKER_TEXT
    assert [p.name for p in tmp_path.iterdir()] == ["site"]


def test_a_read_only_folder_is_a_placed_diagnostic_with_the_old_site_untouched(tmp_path, monkeypatch):
    """Root may write anywhere, so the read-only file system is simulated where the staging folder is made."""
    out = tmp_path / "site"
    write_site(PAGES, out, published=PUBLISHED)
    before = tree(out)

    def read_only(prefix, dir):
        raise OSError(errno.EROFS, "Read-only file system", f"{dir}/{prefix}abc123")

    monkeypatch.setattr(swap_module.tempfile, "mkdtemp", read_only)
    with pytest.raises(WriteError) as caught:
        write_site(PAGES, out, published=PUBLISHED)
    monkeypatch.undo()
    assert caught.value.lines() == [f"{tmp_path}: error: cannot create the folder for the new site here: read-only file system; "
                                    "the previous site is untouched [site.write-failed]"]
    assert tree(out) == before and sorted(p.name for p in tmp_path.iterdir()) == ["site"]
