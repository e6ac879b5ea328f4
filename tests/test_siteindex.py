"""The site's index and the records files found fit before: a rebuild neither reads an unchanged page it left nor checks
an unchanged published file again, and anything edited, replaced or damaged is read and checked as without them."""

from __future__ import annotations

import os
import random
from dataclasses import replace

import pytest

import sitegen.build as build
import sitegen.publish.downloads as downloads
import sitegen.publish.siteindex as siteindex
import sitegen.publish.site as site
import sitegen.publish.stamp as stamp_module
from sitegen.core.errors import PublicationError
from sitegen.core.files import framed
from sitegen.publish.siteindex import site_stats
from test_incremental import Counting, _edit_entry, _full_build, tree, workspace  # noqa: F401 (workspace: a fixture)


@pytest.fixture
def settled(monkeypatch):
    """Every page taken as written long before the index (a small site is built within RACY_NS, so none would be listed)."""
    monkeypatch.setattr(siteindex, "RACY_NS", 0)


def _opened(monkeypatch) -> list[str]:
    """The previous site's files read to be compared (site._linked), by name."""
    opened: list[str] = []
    linked = site._linked

    def counted(old, new, size, holds):
        opened.append(str(old))
        return linked(old, new, size, holds)

    monkeypatch.setattr(site, "_linked", counted)
    return opened


def test_an_unchanged_page_the_last_build_left_is_linked_without_reading_it(workspace, monkeypatch, settled):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    held = siteindex.read_index(build.PageCache.open(cache), out)
    assert held and all(path.endswith(".html") for path in held)
    _edit_entry(ws, random.Random(0), 0)  # the shared pages change; every case and case-run page keeps its bytes
    counted = Counting(monkeypatch)
    opened = _opened(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert counted.relinked == len(held) and counted.linked == counted.relinked
    assert opened and not set(opened) & {str(out / path) for path in held}, "a page the index holds was read"
    assert tree(out) == tree(_full_build(ws))


@pytest.mark.parametrize("change", ["edited", "replaced with its time", "second name", "gone"])
def test_a_page_changed_since_the_index_was_taken_is_not_linked_unread(workspace, monkeypatch, settled, change):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    held = siteindex.read_index(build.PageCache.open(cache), out)
    victim = out / sorted(path for path in held if "/cases/" in path)[0]
    data, info = victim.read_bytes(), victim.stat()
    tampered = data.replace(b"<main", b"<MAIN", 1)
    if change == "edited":  # same size, a moment later
        victim.write_bytes(tampered)
        os.utime(victim, ns=(info.st_atime_ns, info.st_mtime_ns + 10**9))
    elif change == "replaced with its time":  # another file (inode) of the same size and time in its place
        other = victim.with_name("other.tmp")
        other.write_bytes(tampered)
        os.utime(other, ns=(info.st_atime_ns, info.st_mtime_ns))
        os.replace(other, victim)
    elif change == "second name":
        os.link(victim, ws["root"] / "second-name.html")
    else:
        victim.unlink()
    _edit_entry(ws, random.Random(0), 0)
    counted = Counting(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert counted.relinked == len(held) - 1
    assert victim.read_bytes() == data and victim.stat().st_nlink == 1
    assert tree(out) == tree(_full_build(ws))


@pytest.mark.parametrize("damage", ["edited", "truncated", "another folder"])
def test_a_damaged_or_foreign_index_is_not_used(workspace, monkeypatch, settled, damage):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    index = cache / siteindex.INDEX
    data = index.read_bytes()
    if damage == "edited":
        index.write_bytes(data[:-9] + b"x" + data[-8:])
    elif damage == "truncated":
        index.write_bytes(data[: len(data) // 2])
    else:
        body = data[len(siteindex.MAGIC) + 65:].replace(str(out).encode("utf-8"), str(out.with_name("elsewhere")).encode("utf-8"), 1)
        index.write_bytes(framed(siteindex.MAGIC, body))
    _edit_entry(ws, random.Random(0), 0)
    counted = Counting(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert counted.relinked == 0 and counted.linked > 0  # read and compared instead
    assert tree(out) == tree(_full_build(ws))


def test_a_records_file_found_fit_before_is_not_checked_again(workspace, monkeypatch):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    checked: list[str] = []
    refusals = downloads._refusals
    monkeypatch.setattr(downloads, "_refusals", lambda shown, *rest: checked.append(shown) or refusals(shown, *rest))
    build.build_site(ws["records"], out, cache=cache)
    first = [name for name in checked if not name.startswith("metadata/")]
    assert first
    checked.clear()
    _edit_entry(ws, random.Random(0), 0)
    build.build_site(ws["records"], out, cache=cache)
    assert [name for name in checked if not name.startswith("metadata/")] == []
    for entry in (cache / "published").iterdir():  # damaged claims are no claims: every file is checked again
        entry.write_bytes(entry.read_bytes()[:-1] + b"X")
    _edit_entry(ws, random.Random(1), 1)
    build.build_site(ws["records"], out, cache=cache)
    assert sorted(name for name in checked if not name.startswith("metadata/")) == sorted(first)
    assert tree(out) == tree(_full_build(ws))


def test_a_file_found_fit_is_checked_again_for_other_internal_fields(workspace, tmp_path):
    records = build.load_phase(workspace["records"])
    clean = downloads.CleanFiles(tmp_path / "published", b"source")
    assert downloads.collect_downloads(records, clean) == downloads.collect_downloads(records)
    assert len(list((tmp_path / "published").iterdir())) == len(records.config.publish)
    stricter = replace(records, config=replace(records.config, internal_fields=(*records.config.internal_fields, "run")))
    with pytest.raises(PublicationError) as raised:
        downloads.collect_downloads(stricter, clean)
    assert any(d.code == "publish.internal-field" for d in raised.value.diagnostics)


def test_the_index_and_the_stamp_are_what_a_listing_of_the_new_site_finds(workspace, monkeypatch, settled):
    """Both are taken from what the writers said of each file they wrote or linked (site.SiteFile.made), not from
    listing the site again: they must say what a listing says, for a first build and for one that links."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    listed = []
    for module in (siteindex, stamp_module):
        monkeypatch.setattr(module, "site_stats", lambda folder: listed.append(folder) or site_stats(folder))
    for round_ in range(2):
        build.build_site(ws["records"], out, cache=cache)
        stats = site_stats(out)
        stamp = stamp_module.read_stamp(build.PageCache.open(cache))
        assert stamp is not None and stamp.files == stamp_module.site_files(out, stats)
        held = siteindex.read_index(build.PageCache.open(cache), out)
        assert held and all((stats[path].st_dev, stats[path].st_ino, stats[path].st_size, stats[path].st_mtime_ns)
                            == (file.dev, file.ino, file.size, file.mtime_ns) for path, file in held.items())
        _edit_entry(ws, random.Random(round_), round_)
    assert listed == [], "the new site was listed"
