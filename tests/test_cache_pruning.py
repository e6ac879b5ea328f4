"""A build's cache holds what its last build used: what no build uses any more is deleted, and nothing outside it ever is."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

import sitegen.build as build
import sitegen.publish.siteindex as siteindex
import sitegen.render.pagecache as pagecache
from sitegen.core.files import TIME_STEP_NS, framed, prune_unused, read_framed
from sitegen.publish.site import PageWriter
from sitegen.render.pagecache import MARKER, PRUNED

SMALL = Path(__file__).resolve().parent / "data" / "records-small"
LONG_AGO_NS = 10**18  # 2001: older than any build of these tests


def entries(cache: Path) -> set[str]:
    """The cache's entries by path, its top-level files (marker, stamp, site index) left out."""
    return {p.relative_to(cache).as_posix() for p in cache.rglob("*") if p.is_file() and p.parent != cache}


def age(cache: Path) -> None:
    """Every entry of the cache made to look written long ago, as if the next build came a day later."""
    for p in cache.rglob("*"):
        if p.is_file() and p.parent != cache:
            os.utime(p, ns=(LONG_AGO_NS, LONG_AGO_NS))


@pytest.fixture
def records(tmp_path, monkeypatch):
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    shutil.copytree(SMALL, tmp_path / "records")
    return tmp_path / "records"


@pytest.fixture
def every_build(monkeypatch):
    """Every build prunes (by default a cache is pruned at most once a day)."""
    monkeypatch.setattr(pagecache, "PRUNE_EVERY_NS", 0)


def test_a_build_leaves_the_cache_a_build_of_the_same_records_would_make_from_nothing(every_build, records, tmp_path, monkeypatch):
    """Every page changes with the build date: the first build's entries are no longer used, and go; what the second
    build read (answers checked, runs verified) or made stays, exactly what one build with an empty cache makes."""
    cache, out = tmp_path / "cache", tmp_path / "site"
    build.build_site(records, out, cache=cache)
    first = entries(cache)
    assert any(p.startswith("pages/") for p in first) and any(not p.startswith("pages/") for p in first)
    age(cache)
    monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1790000000 + 86400))
    said = []
    build.build_site(records, out, cache=cache, progress=lambda phase, detail="": said.append((phase, detail)))
    build.build_site(records, tmp_path / "fresh-site", cache=tmp_path / "fresh")
    assert entries(cache) == entries(tmp_path / "fresh")
    gone = len(first - entries(cache))
    assert gone > 0 and ("cache", f"{gone} entries this build did not use deleted from {cache}") in said
    assert (cache / MARKER).is_file() and (cache / siteindex.INDEX).is_file()


def test_pages_linked_from_the_previous_site_unread_keep_their_entries(every_build, records, tmp_path, monkeypatch):
    """A page the index lets the build link without reading its entry is used all the same: its entry stays, although
    nothing touched it; the changed pages' old entries go."""
    monkeypatch.setattr(siteindex, "RACY_NS", 0)  # every page taken as written long before the index, as in a large site
    cache, out = tmp_path / "cache", tmp_path / "site"
    build.build_site(records, out, cache=cache)
    age(cache)
    linked = []
    relink = PageWriter.relink

    def counted(writer, path, held):
        found = relink(writer, path, held)
        if found is not None:
            linked.append(path)
        return found

    monkeypatch.setattr(PageWriter, "relink", counted)
    entry = sorted((records / "changelog").glob("*.md"))[0]  # the changelog and overview pages change, case pages do not
    entry.write_text(entry.read_text(encoding="utf-8") + "\nOne more sentence.\n", encoding="utf-8")
    build.build_site(records, out, cache=cache)
    build.build_site(records, tmp_path / "fresh-site", cache=tmp_path / "fresh")
    assert linked, "pages were linked unread"
    assert entries(cache) == entries(tmp_path / "fresh")
    untouched = [p for p in (cache / "pages").rglob("*") if p.is_file() and p.stat().st_mtime_ns == LONG_AGO_NS]
    assert untouched, "entries neither read nor written stayed, as their pages are in the site"


def test_a_link_planted_in_the_cache_goes_as_a_link_and_what_it_names_stays(every_build, records, tmp_path):
    cache, out = tmp_path / "cache", tmp_path / "site"
    build.build_site(records, out, cache=cache)
    precious = tmp_path / "precious.txt"
    precious.write_text("mine", encoding="utf-8")
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "inner").mkdir(parents=True)
    (elsewhere / "inner" / "kept.txt").write_text("mine too", encoding="utf-8")
    (cache / "pages" / "zz").mkdir(exist_ok=True)
    (cache / "pages" / "zz" / "link").symlink_to(precious)
    (cache / "pages" / "folder-link").symlink_to(elsewhere, target_is_directory=True)
    for link in ((cache / "pages" / "zz" / "link"), (cache / "pages" / "folder-link")):
        os.utime(link, ns=(LONG_AGO_NS, LONG_AGO_NS), follow_symlinks=False)
    build.build_site(records, out, cache=cache, detail_runs=1)  # built otherwise: not up to date, so the cache is pruned
    assert not os.path.lexists(cache / "pages" / "zz" / "link") and not os.path.lexists(cache / "pages" / "folder-link")
    assert precious.read_text(encoding="utf-8") == "mine"
    assert (elsewhere / "inner" / "kept.txt").read_text(encoding="utf-8") == "mine too"


def test_prune_unused_keeps_what_was_read_written_or_named_since_and_deletes_the_rest(tmp_path):
    folder = tmp_path / "kind"
    (folder / "ab").mkdir(parents=True)
    for name in ("read", "named", "stale", "new"):
        (folder / "ab" / name).write_bytes(framed(b"test/1\n", name.encode()))
        os.utime(folder / "ab" / name, ns=(LONG_AGO_NS, LONG_AGO_NS))
    (folder / "ab" / "new").write_bytes(framed(b"test/1\n", b"written now"))
    since = (folder / "ab" / "new").stat().st_mtime_ns
    assert read_framed(folder / "ab" / "read", b"test/1\n") == b"read"  # a read marks the entry used
    assert (folder / "ab" / "read").stat().st_mtime_ns >= since - TIME_STEP_NS
    assert prune_unused(folder, used_since_ns=since, keep={"named"}.__contains__) == 1
    assert sorted(p.name for p in (folder / "ab").iterdir()) == ["named", "new", "read"]
    assert prune_unused(folder, used_since_ns=since, keep={"named"}.__contains__) == 0


def test_a_cache_is_pruned_at_most_once_a_day_and_at_once_when_it_never_was(records, tmp_path, monkeypatch):
    cache, out = tmp_path / "cache", tmp_path / "site"
    build.build_site(records, out, cache=cache)
    assert (cache / PRUNED).is_file(), "a new cache is taken as pruned when made"
    first = {p for p in entries(cache) if p.startswith("pages/")}
    age(cache)

    def built_again(day: int) -> set[str]:
        """The page entries after a build on another day: every page changes with the date."""
        monkeypatch.setenv("SOURCE_DATE_EPOCH", str(1790000000 + 86400 * day))
        build.build_site(records, out, cache=cache)
        return {p for p in entries(cache) if p.startswith("pages/")}

    assert built_again(1) > first, "within a day of the last pruning, nothing goes"
    os.utime(cache / PRUNED, ns=(LONG_AGO_NS, LONG_AGO_NS))
    second = built_again(2)
    assert not second & first and (cache / PRUNED).stat().st_mtime_ns > LONG_AGO_NS, "a day later, what is unused goes"
    age(cache)
    (cache / PRUNED).unlink()  # a cache made before sitegen pruned
    assert not built_again(3) & second


@pytest.mark.parametrize("kind", ["named pipe", "device", "directory"])
def test_a_cache_entry_that_is_not_a_regular_file_is_ignored_at_once(tmp_path, kind):
    """The cache is never trusted: a named pipe planted as an entry would make a read wait for a writer for ever, a link to
    a device never end. Read in a thread with a time limit, so a wait fails this test instead of hanging the suite."""
    import threading

    from sitegen.core.files import read_framed, read_framed_head

    entry = tmp_path / "entry"
    if kind == "named pipe":
        os.mkfifo(entry)
    elif kind == "device":
        entry.symlink_to("/dev/zero")
    else:
        entry.mkdir()
    found: list = []
    reader = threading.Thread(target=lambda: found.extend([read_framed(entry, b"magic\n"), read_framed_head(entry, b"magic\n")]),
                              daemon=True)
    reader.start()
    reader.join(10)
    assert found == [None, None], f"the read of a {kind} did not return at once"
