"""Incremental builds (--cache): the bytes of a full build after any sequence of edits, pages reused only when unchanged."""

from __future__ import annotations

import hashlib
import json
import marshal
import os
import pickle
import random
import shutil
import zlib
from dataclasses import replace
from pathlib import Path

import factories as f
import pytest

import sitegen.build as build
import sitegen.load.answers as answers_module
import sitegen.publish.siteindex as siteindex
import sitegen.render.plan as plan
import sitegen.score.verify as verify
from sitegen.cli import main
from sitegen.core import model as m
from sitegen.core.errors import PublicationError
from sitegen.render.cases import pairs_by_case
from sitegen.render.environment import Renderer
from sitegen.render.plan import PageJob
from sitegen.render.pagecache import MARKER, PageCache
from sitegen.core.files import SourceFile, framed
from sitegen.publish.site import PageWriter
import sitegen.publish.tables as tables
from sitegen.publish import exportcache
from sitegen.score import compared as compared_module
from sitegen.score.verified import ENTRY_MAGIC, VerifiedRuns

SMALL = Path(__file__).resolve().parent / "data" / "records-small"


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


class Counting:
    """Counts the cache's hits and stores (on the class, for the test's duration: builds run in this process): a hit is a
    page read from its entry, or linked from the previous site by the digest its entry holds."""

    def __init__(self, monkeypatch):
        self.hits = self.stores = self.linked = self.relinked = 0
        get, put, reuse = PageCache.get, PageCache.put, getattr(PageWriter, "reuse", None)
        relink = getattr(PageWriter, "relink", None)

        def counted_get(cache, key):
            found = get(cache, key)
            self.hits += found is not None
            return found

        def counted_put(cache, key, data):
            self.stores += 1
            return put(cache, key, data)

        def counted_reuse(writer, path, size, sha256, *key):
            found = reuse(writer, path, size, sha256, *key)
            page = found is not None and not path.startswith("downloads/")  # downloads are linked this way too
            self.linked += page
            self.hits += page
            return found

        def counted_relink(writer, path, held):
            found = relink(writer, path, held)
            self.relinked += found is not None
            self.linked += found is not None
            self.hits += found is not None
            return found

        monkeypatch.setattr(PageCache, "get", counted_get)
        monkeypatch.setattr(PageCache, "put", counted_put)
        if reuse is not None:  # (a sitegen that reads every entry it uses has none)
            monkeypatch.setattr(PageWriter, "reuse", counted_reuse)
        if relink is not None:
            monkeypatch.setattr(PageWriter, "relink", counted_relink)


@pytest.fixture
def workspace(tmp_path, monkeypatch):
    """The small records (with a second state in which the unpublished run r3 is published and scored), and copies of the
    templates and catalogs the build reads, so a test may edit them."""
    records = tmp_path / "records"
    shutil.copytree(SMALL, records)
    originals = {name: (records / name).read_bytes() for name in ("runs.json", "results.json")}
    runs = json.loads(originals["runs.json"])
    for run in runs["runs"]:
        if run["id"] == "r3":
            run["published"] = True
    (records / "runs.json").write_text(json.dumps(runs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert main(["score", "r3", "--records", str(records)]) == 0
    originals["sitegen.json"] = (records / "sitegen.json").read_bytes()
    config = json.loads(originals["sitegen.json"])  # the run's answers file is published with it, as a maintainer adds a run
    config["publish"].append({"record": "answers-hidden.json", "name": "quality-answers-r3.json"})
    (records / "sitegen.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    published = {name: (records / name).read_bytes() for name in originals}
    for name, data in originals.items():
        (records / name).write_bytes(data)
    templates, locales = tmp_path / "templates", tmp_path / "locales"
    shutil.copytree(build.TEMPLATES, templates)
    shutil.copytree(build.LOCALES, locales)
    monkeypatch.setattr(build, "TEMPLATES", templates)
    monkeypatch.setattr(build, "LOCALES", locales)
    monkeypatch.setattr(build, "SOURCES", (build.SOURCES[0], templates, locales))
    monkeypatch.setenv("SOURCE_DATE_EPOCH", "1790000000")
    return {"root": tmp_path, "records": records, "templates": templates, "locales": locales,
            "states": (originals, published)}


def _edit_entry(ws, rng, step):
    entry = sorted((ws["records"] / "changelog").glob("*.md"))[rng.randrange(5)]
    entry.write_text(entry.read_text(encoding="utf-8") + f"\nOne more sentence, edit {step}.\n", encoding="utf-8")


def _toggle_run(ws, rng, step):
    """Publish the run r3 (with its scored results), or take it back: a run added to or gone from the site."""
    originals, published = ws["states"]
    current = (ws["records"] / "runs.json").read_bytes()
    for name, data in (originals if current == published["runs.json"] else published).items():
        (ws["records"] / name).write_bytes(data)


def _edit_template(ws, rng, step):
    name, old, new = rng.choice([
        ("case_rows.html.j2", '<ol class="excerpt"', f'<ol data-edit="{step}" class="excerpt"'),
        ("base.html.j2", '<meta name="referrer" content="no-referrer">', f'<meta name="referrer" content="no-referrer" data-edit="{step}">'),
        ("case.html.j2", '<ol class="document"', f'<ol data-edit="{step}" class="document"'),
    ])
    path = ws["templates"] / name
    text = path.read_text(encoding="utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), encoding="utf-8")


def _edit_catalog(ws, rng, step):
    path = ws["locales"] / "sv" / "LC_MESSAGES" / "sitegen.po"
    text = path.read_text(encoding="utf-8")
    old = 'msgid "Skip to content"\nmsgstr "'
    assert old in text
    path.write_text(text.replace(old, old + f"({step}) ", 1), encoding="utf-8")


def _change_version(ws, rng, step):
    ws["monkeypatch"].setattr(build, "__version__", f"0.1.0+edit{step}")


def _change_date(ws, rng, step):
    ws["monkeypatch"].setenv("SOURCE_DATE_EPOCH", str(1790000000 + 86400 * rng.randrange(1, 400)))


def _corrupt_cache(ws, rng, step):
    entries = [p for folder in ("pages", "verified", "compared", "case-rows", "names")
               for p in sorted((ws["root"] / "cache" / folder).rglob("*"))]
    entries = [p for p in entries if p.is_file()]
    for victim in rng.sample(entries, min(2, len(entries))):
        data = victim.read_bytes()
        victim.write_bytes(data[:-7] + b"changed" if rng.random() < 0.5 else data[: len(data) // 2])
    (ws["root"] / "cache" / "build.json").write_text(rng.choice(["{", "[]", '{"format": "other"}']), encoding="utf-8")


def _tamper_site(ws, rng, step):
    pages = sorted((ws["root"] / "incremental").rglob("*.html"))
    if pages:
        victim = rng.choice(pages)
        victim.write_bytes(victim.read_bytes().replace(b"</main>", b"<p>changed</p></main>", 1))


def _damage_index(ws, rng, step):
    """The site's index (publish/siteindex.py) edited, cut short, or naming other inodes and times with a valid digest."""
    index = ws["root"] / "cache" / siteindex.INDEX
    if index.exists():
        data = index.read_bytes()
        choice = rng.randrange(3)
        if choice == 0:
            index.write_bytes(data[:-9] + b"x" + data[-8:])
        elif choice == 1:
            index.write_bytes(data[: len(data) // 2])
        else:
            body = json.loads(data[len(siteindex.MAGIC) + 65:])
            body["files"] = [row[:4] + [row[4], row[5] + 1, row[6]] for row in body["files"]]
            index.write_bytes(framed(siteindex.MAGIC, json.dumps(body).encode("utf-8")))
    (ws["root"] / "cache" / "build.json").unlink(missing_ok=True)


def _nothing(ws, rng, step):
    pass


EDITS = (_edit_entry, _toggle_run, _edit_template, _edit_catalog, _change_version, _change_date, _corrupt_cache,
         _tamper_site, _damage_index, _nothing)


@pytest.mark.parametrize("settled", [False, True], ids=["fresh site", "settled site"])
@pytest.mark.parametrize("seed", [1, 2])
def test_an_incremental_build_after_random_edits_is_byte_identical_to_a_full_build(workspace, monkeypatch, seed, settled):
    """Issue 15: random sequences of edits to records, templates, catalogs, sitegen's version, the date, the cache and
    the site itself; after each, the build with the cache gives exactly the files a clean full build gives. A small
    site is built in less than siteindex.RACY_NS, so its index lists no page; "settled" takes every page as written long
    before the index, as in a large site, so unchanged pages are linked by the index unread."""
    if settled:
        monkeypatch.setattr(siteindex, "RACY_NS", 0)
    ws = dict(workspace, monkeypatch=monkeypatch)
    rng = random.Random(seed)
    cache, incremental = ws["root"] / "cache", ws["root"] / "incremental"
    counted = Counting(monkeypatch)
    build.build_site(ws["records"], incremental, cache=cache)
    steps = [rng.choice(EDITS) for _ in range(6)] + [_toggle_run]
    reused = 0
    for step, edit in enumerate(steps):
        edit(ws, rng, step)
        before = counted.hits
        build.build_site(ws["records"], incremental, cache=cache)
        reused += counted.hits - before
        full = ws["root"] / f"full-{step}"
        build.build_site(ws["records"], full)
        assert tree(incremental) == tree(full), f"after {[e.__name__ for e in steps[: step + 1]]}"
        shutil.rmtree(full)
    assert counted.stores > 0 and reused > 0, "the cache was used"
    assert counted.relinked > 0 or not settled, "the index was used"


def test_adding_a_run_renders_only_the_pages_that_depend_on_it(workspace, monkeypatch):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    counted = Counting(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    first = counted.stores
    _toggle_run(ws, random.Random(0), 0)
    counted.hits = counted.stores = 0
    build.build_site(ws["records"], out, cache=cache)
    case_versions = len(json.loads((ws["records"] / "cases.json").read_text(encoding="utf-8"))["case_versions"])
    own = len([p for p in (out / "en" / "runs").rglob("*.html") if p.name == "r3.html" or p.parent.name == "r3"])
    # the new run's case-run pages and own pages, and every case page (its grid of outcomes gains a row), in both languages
    assert own and counted.stores == 2 * (case_versions + case_versions + own)
    assert counted.hits == first - 2 * case_versions  # the other runs' case-run pages and own pages came from the cache
    assert counted.linked == counted.hits, "each of them linked from the previous site without reading its entry"


class Rendering:
    """Counts the pages rendered, by path (builds run in this process), whatever the cache does."""

    def __init__(self, monkeypatch):
        self.paths: list[str] = []
        page = Renderer.page

        def counted(renderer, template, rest, *args, **kwargs):
            made = page(renderer, template, rest, *args, **kwargs)
            self.paths.append(made.path)
            return made

        monkeypatch.setattr(Renderer, "page", counted)


def test_a_run_added_with_its_own_answers_file_renders_only_its_pages_the_case_pages_and_the_shared_ones(workspace, monkeypatch):
    """A run added changes the configuration (its answers file is published): the other runs' case-run pages keep their keys."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    rendering = Rendering(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    everything = set(rendering.paths)
    _toggle_run(ws, random.Random(0), 0)
    rendering.paths.clear()
    build.build_site(ws["records"], out, cache=cache)
    rendered = set(rendering.paths)
    assert len(rendering.paths) == len(rendered), "no page is rendered twice"
    case_pages = {p for p in everything if "/cases/" in p and p.endswith("/index.html")}
    case_runs = {p for p in everything | rendered if "/cases/" in p and p not in case_pages}
    new_run = {p for p in case_runs if p.endswith("/r3.html")}
    assert case_pages and new_run and case_runs - new_run
    assert {p for p in rendered if p in case_runs} == new_run  # not one other run's case-run page
    assert case_pages <= rendered  # each grid of outcomes gained a row
    assert {"sv/index.html", "en/index.html", "index.html", "sv/method.html"} <= rendered
    assert tree(out) == tree(_full_build(ws))


def test_a_run_added_leaves_the_other_runs_pages_unrendered_and_their_results_unpacked(workspace, monkeypatch):
    """Issue 15 target 3: the other runs' own pages (run page and list pages) keep their bytes, so they come from the cache;
    and their case-run pages are keyed by one digest per run, so their results are not indexed for keys."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    rendering = Rendering(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert any(p.startswith("en/runs/r1") for p in rendering.paths)
    _toggle_run(ws, random.Random(0), 0)
    indexed: list[str] = []
    index_observations = plan.index_observations

    def counted(records, result):
        indexed.append(result.run)
        return index_observations(records, result)

    monkeypatch.setattr(plan, "index_observations", counted)
    rendering.paths.clear()
    build.build_site(ws["records"], out, cache=cache)
    own = {p for p in rendering.paths if "/runs/" in p}
    assert own and all(p.split("/")[2].split(".")[0] == "r3" for p in own), sorted(own)
    assert set(indexed) == {"r3"}, "the unchanged runs' results were indexed"
    assert tree(out) == tree(_full_build(ws))


def test_a_cached_page_the_previous_site_holds_is_linked_without_reading_its_entry(workspace, monkeypatch):
    """An unchanged page is linked from the previous site by the digest in its entry's head: its entry is not read; and an
    unchanged records file is linked without being read again for writing (its digest is known from loading it)."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    _edit_entry(ws, random.Random(0), 0)  # the shared pages change; every case and case-run page keeps its bytes
    counted = Counting(monkeypatch)
    reads: list[str] = []
    writing: list[bool] = []
    data, write_site = SourceFile.data, build.write_site

    def read(file):
        if writing:
            reads.append(Path(file.path).name)
        return data.fget(file)

    def counted_write(*args, **kwargs):
        writing.append(True)
        return write_site(*args, **kwargs)

    monkeypatch.setattr(SourceFile, "data", property(read))
    monkeypatch.setattr(build, "write_site", counted_write)
    gets = []
    get = PageCache.get
    monkeypatch.setattr(PageCache, "get", lambda cache, key: gets.append(key) or get(cache, key))
    build.build_site(ws["records"], out, cache=cache)
    assert counted.linked > 0 and gets == [], "a cache entry was read"
    assert writing and reads == [], "a records file was read again to be written"
    assert tree(out) == tree(_full_build(ws))


def test_a_page_whose_previous_file_differs_is_read_from_its_entry_and_written(workspace, monkeypatch):
    """The entry's digest is a claim: a previous file that does not hash to it is not linked, the entry is read (and
    checked), and the page written afresh."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    victim = sorted(p for p in out.rglob("*.html") if "/cases/" in p.as_posix() and p.name != "index.html")[0]
    good = victim.read_bytes()
    victim.write_bytes(good.replace(b"<main", b"<MAIN", 1))
    _edit_entry(ws, random.Random(0), 0)
    counted = Counting(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert victim.read_bytes() == good and counted.hits > counted.linked
    assert tree(out) == tree(_full_build(ws))


def _full_build(ws) -> Path:
    full = ws["root"] / "full"
    shutil.rmtree(full, ignore_errors=True)
    build.build_site(ws["records"], full)
    return full


def test_a_build_with_nothing_changed_stops_before_reading_the_records(workspace, monkeypatch):
    cache, out = workspace["root"] / "cache", workspace["root"] / "site"
    build.build_site(workspace["records"], out, cache=cache)
    before = tree(out)

    def no_reading(*args, **kwargs):
        raise AssertionError("the records were read")

    monkeypatch.setattr(build, "check_records", no_reading)
    said = []
    summary = build.build_site(workspace["records"], out, cache=cache, progress=lambda phase, detail="": said.append(phase))
    assert said == ["up to date"] and tree(out) == before and summary.pages == sum(1 for p in before if p.endswith(".html"))


def test_a_folder_that_is_not_a_sitegen_cache_is_neither_read_nor_written(workspace):
    foreign = workspace["root"] / "mine"
    foreign.mkdir()
    (foreign / "notes.txt").write_text("mine", encoding="utf-8")
    said = []
    build.build_site(workspace["records"], workspace["root"] / "site", cache=foreign,
                     progress=lambda phase, detail="": said.append(phase))
    assert tree(foreign) == {"notes.txt": b"mine"} and "cache" in said
    assert not PageCache.open(foreign).usable


def test_a_cache_entry_that_fails_its_digest_is_not_used(tmp_path):
    cache = PageCache.open(tmp_path / "cache")
    assert cache.usable and (tmp_path / "cache" / MARKER).is_file()
    cache.put("ab" * 32, b"<p>page</p>")
    assert cache.get("ab" * 32) == b"<p>page</p>"
    entry = tmp_path / "cache" / "pages" / "ab" / ("ab" * 32)
    entry.write_bytes(entry.read_bytes().replace(b"page", b"evil"))
    assert cache.get("ab" * 32) is None
    entry.write_bytes(b"")
    assert cache.get("ab" * 32) is None
    assert cache.get("cd" * 32) is None


@pytest.mark.parametrize("where", ["site", "site/cache", "records/cache", "."])
def test_a_cache_inside_the_site_or_the_records_is_refused(workspace, where, capsys):
    root = workspace["root"]
    cache = root if where == "." else root / where
    code = main(["build", "--records", str(workspace["records"]), "--out", str(root / "site"), "--cache", str(cache), "--quiet"])
    assert code == 2 and "--cache" in capsys.readouterr().err
    assert not (root / "site").exists()


class Scoring:
    """Counts the runs scored afresh (builds run in this process)."""

    def __init__(self, monkeypatch):
        self.runs: list[str] = []
        score_one = verify._score_one

        def counted(request, run_id):
            self.runs.append(run_id)
            return score_one(request, run_id)

        monkeypatch.setattr(verify, "_score_one", counted)


def test_a_rebuild_after_one_run_added_scores_only_that_run(workspace, monkeypatch):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    scoring = Scoring(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert sorted(scoring.runs) == ["r1", "r2"]
    _toggle_run(ws, random.Random(0), 0)
    scoring.runs.clear()
    build.build_site(ws["records"], out, cache=cache)
    assert scoring.runs == ["r3"]
    assert tree(out) == tree(_full_build(ws))


class Comparing:
    """Counts the comparisons made afresh (builds run in this process)."""

    def __init__(self, monkeypatch):
        self.pairs: list[tuple[str, str]] = []
        compare = verify.compare_summaries

        def counted(records, a, b, *args, **kwargs):
            self.pairs.append((a.id, b.id))
            return compare(records, a, b, *args, **kwargs)

        monkeypatch.setattr(verify, "compare_summaries", counted)


def test_runs_compared_before_are_not_compared_again(workspace, monkeypatch):
    """r3 added is compared with r2 (the two are comparable, r1 with neither); once kept, that comparison is not made again
    while neither run's inputs change, also after r3 is taken away and added back."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    comparing = Comparing(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert comparing.pairs == []
    _toggle_run(ws, random.Random(0), 0)
    build.build_site(ws["records"], out, cache=cache)
    assert comparing.pairs == [("r2", "r3")] and len(list((cache / "compared").iterdir())) == 1
    (cache / "build.json").unlink()  # so the build does not stop early: the records are read and verified
    comparing.pairs.clear()
    build.build_site(ws["records"], out, cache=cache)
    _toggle_run(ws, random.Random(0), 1)
    build.build_site(ws["records"], out, cache=cache)
    _toggle_run(ws, random.Random(0), 2)
    build.build_site(ws["records"], out, cache=cache)
    assert comparing.pairs == []
    assert tree(out) == tree(_full_build(ws))


@pytest.mark.parametrize("damage", ["truncated", "edited", "counts of another measure", "a change not of strings", "not marshal"])
def test_a_corrupt_or_foreign_comparison_cache_is_ignored(workspace, monkeypatch, damage):
    """An entry that fails its digest, or passes it but is not shaped as counts per measure and changes, is not trusted:
    the runs are compared again, and the site is a full build's."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    _toggle_run(ws, random.Random(0), 0)  # r3 published: it is compared with r2
    build.build_site(ws["records"], out, cache=cache)
    entries = sorted((cache / "compared").iterdir())
    assert entries
    for entry in entries:
        blob = entry.read_bytes()
        measures, changes = marshal.loads(blob[len(compared_module.ENTRY_MAGIC) + 65:])
        if damage == "truncated":
            entry.write_bytes(blob[: len(blob) // 2])
        elif damage == "edited":
            entry.write_bytes(blob[:-9] + b"x" + blob[-8:])
        elif damage == "not marshal":
            entry.write_bytes(framed(compared_module.ENTRY_MAGIC, b"\xff not marshal"))
        else:
            if damage == "counts of another measure":
                measures = (("NO_SUCH_MEASURE", (1, 2), (2, 2)),) + measures[1:]
            else:
                changes = changes + (("GROUNDING", "a", "1", "report", 7, "passed", "failed"),)
            entry.write_bytes(framed(compared_module.ENTRY_MAGIC, marshal.dumps((measures, changes), 4)))
    (cache / "build.json").unlink()
    comparing = Comparing(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert len(comparing.pairs) == len(entries)
    assert tree(out) == tree(_full_build(ws))
    kept = compared_module.ComparedRuns(cache / "compared", b"")
    assert all(compared_module._plain_measures(marshal.loads(p.read_bytes()[len(compared_module.ENTRY_MAGIC) + 65:])[0])
               for p in sorted((cache / "compared").iterdir())), "entries replaced"
    assert kept.key("a" * 64, None, regressions_only=True) is None


class Tabling:
    """Counts the runs whose case-table rows are written afresh (builds run in this process)."""

    def __init__(self, monkeypatch):
        self.runs: list[str] = []
        rows = tables.run_case_rows

        def counted(context, run):
            self.runs.append(run.id)
            return rows(context, run)

        monkeypatch.setattr(tables, "run_case_rows", counted)


def test_a_runs_case_table_rows_are_written_once_while_its_result_is_the_same(workspace, monkeypatch):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    tabling = Tabling(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert sorted(tabling.runs) == ["r1", "r2"]
    tabling.runs.clear()
    _toggle_run(ws, random.Random(0), 0)
    build.build_site(ws["records"], out, cache=cache)
    assert tabling.runs == ["r3"]
    assert tree(out) == tree(_full_build(ws))


@pytest.mark.parametrize("damage", ["truncated", "edited", "another run's rows", "not UTF-8", "no line end"])
def test_a_corrupt_or_foreign_case_rows_cache_is_ignored(workspace, monkeypatch, damage):
    """Rows that fail their digest, or pass it but are not UTF-8 rows of that very run, are not trusted: written afresh,
    and the case table (and the site) is a full build's."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    entries = sorted((cache / "case-rows").iterdir())
    assert len(entries) == 2
    for entry in entries:
        blob = entry.read_bytes()
        rows = blob[len(exportcache.ENTRY_MAGIC) + 65:]
        assert rows.startswith((b"r1,", b"r2,")) and rows.endswith(b"\r\n")
        if damage == "truncated":
            entry.write_bytes(blob[: len(blob) // 2])
        elif damage == "edited":
            entry.write_bytes(blob[:-9] + b"x" + blob[-8:])
        else:
            forged = {"another run's rows": rows.replace(b"r1,", b"r9,").replace(b"r2,", b"r9,"),
                      "not UTF-8": rows[:3] + b"\xff" + rows[3:], "no line end": rows[:-2]}[damage]
            entry.write_bytes(framed(exportcache.ENTRY_MAGIC, forged))
    (cache / "build.json").unlink()  # so the build does not stop early: the records are read and checked
    tabling = Tabling(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert sorted(tabling.runs) == ["r1", "r2"]
    assert tree(out) == tree(_full_build(ws))


def _entries(cache: Path) -> list[Path]:
    return sorted(p for p in (cache / "verified").iterdir() if p.is_file())


@pytest.mark.parametrize("damage", ["truncated", "edited", "foreign pickle", "not a summary"])
def test_a_corrupt_or_foreign_verification_cache_is_ignored(workspace, monkeypatch, damage):
    """An entry that fails its digest, or passes it but holds anything but a summary and sitegen's own reasons, is not
    trusted: the run is scored again, and the site is a full build's."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    entries = _entries(cache)
    assert len(entries) == 2
    for entry in entries:
        blob = entry.read_bytes()
        if damage == "truncated":
            entry.write_bytes(blob[: len(blob) // 2])
        elif damage == "edited":
            entry.write_bytes(blob[:-9] + b"x" + blob[-8:])
        else:
            # a well-formed packing (reasons.pack_reasons) whose one group names a foreign global
            reasons = marshal.dumps((("a",), {("GROUNDING", 0): zlib.compress(pickle.dumps({"evil": os.getcwd}), 1)}), 4)
            data = marshal.dumps(({"GROUNDING": ({"a": ("1", "report", "x", "failed")}, (0, 1))}, reasons)
                                 if damage == "foreign pickle" else ({"GROUNDING": ["not", "a", "summary"]}, None), 4)
            entry.write_bytes(framed(ENTRY_MAGIC, data))
    (cache / "build.json").unlink()  # so the build does not stop early: the records are read and verified
    scoring = Scoring(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert sorted(scoring.runs) == ["r1", "r2"]
    assert tree(out) == tree(_full_build(ws))
    assert all(VerifiedRuns(cache / "verified", b"").get(p.name) is not None for p in _entries(cache)), "entries replaced"


def test_a_run_whose_answers_changed_is_verified_again_and_refused(workspace, monkeypatch):
    """The cache never hides a record that no longer reproduces: an edited answer changes the run's key."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    answers = ws["records"] / "answers.json"
    data = json.loads(answers.read_text(encoding="utf-8"))
    data["answers"][0]["reviewers"][0]["findings"] = []
    answers.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(PublicationError) as raised:
        build.build_site(ws["records"], out, cache=cache)
    assert any(d.code in ("seal.changed", "results.stale") for d in raised.value.diagnostics)


def test_runs_verified_before_are_not_unpacked_to_check_their_scorer_version(workspace, monkeypatch):
    """A run whose verification the cache holds was scored with this very entry, scorer version included: checking the
    record after a verification taken whole from the cache unpacks no run's recorded results."""
    from sitegen.load.spool import ResultSpool

    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    (cache / "build.json").unlink()  # so the build does not stop early: the records are read and verified
    unpacked: list[str] = []
    verifying: list[bool] = []
    getitem, verify_phase = ResultSpool.__getitem__, build.verify_phase

    def counted_get(spool, run):
        if verifying:
            unpacked.append(run)
        return getitem(spool, run)

    def counted_verify(*args, **kwargs):
        verifying.append(True)
        try:
            return verify_phase(*args, **kwargs)
        finally:
            verifying.clear()

    monkeypatch.setattr(ResultSpool, "__getitem__", counted_get)
    monkeypatch.setattr(build, "verify_phase", counted_verify)
    scoring = Scoring(monkeypatch)
    build.build_site(ws["records"], out, cache=cache)
    assert scoring.runs == [] and unpacked == [], unpacked
    assert tree(out) == tree(_full_build(ws))


def _inodes(folder: Path) -> dict[str, int]:
    return {p.relative_to(folder).as_posix(): p.stat().st_ino for p in folder.rglob("*") if p.is_file()}


def test_a_rebuild_links_the_previous_sites_unchanged_files_and_writes_the_others(workspace, monkeypatch):
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    before, inodes = tree(out), _inodes(out)
    _toggle_run(ws, random.Random(0), 0)
    build.build_site(ws["records"], out, cache=cache)
    after, now = tree(out), _inodes(out)
    unchanged = {p for p in after if before.get(p) == after[p]}
    changed = set(after) - unchanged
    assert unchanged and changed and any(p.startswith("downloads/") for p in unchanged)
    assert {p for p in unchanged if now[p] != inodes[p]} == set(), "an unchanged file was written again"
    assert {p for p in changed if p in inodes and now[p] == inodes[p]} == set()
    assert after == tree(_full_build(ws))


@pytest.mark.parametrize("tamper", ["same size", "appended", "symbolic link", "folder", "second name", "linked folder"])
def test_a_tampered_file_in_the_previous_site_is_written_afresh_not_linked(workspace, monkeypatch, tamper):
    """Reuse compares the previous file's bytes with the page's: an edit of the same size, a symbolic link to a file with
    the right bytes, or a folder in a page's place are never carried over."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    victim = sorted(p for p in out.rglob("*.html") if "/cases/" in p.as_posix())[0]
    data = victim.read_bytes()
    if tamper == "same size":
        victim.write_bytes(data.replace(b"<main", b"<MAIN", 1))
    elif tamper == "appended":
        victim.write_bytes(data + b"<p>changed</p>")
    elif tamper == "symbolic link":
        elsewhere = ws["root"] / "elsewhere.html"
        elsewhere.write_bytes(data)
        victim.unlink()
        victim.symlink_to(elsewhere)
    elif tamper == "second name":
        # the right bytes, but a name outside the site could change them after the build: never shared
        os.link(victim, ws["root"] / "second-name.html")
        os.utime(victim, ns=(victim.stat().st_atime_ns, victim.stat().st_mtime_ns + 10**9))  # so the build does not stop early
    elif tamper == "linked folder":
        # the page's folder replaced by a symbolic link to a copy elsewhere, with the right bytes in it
        elsewhere = ws["root"] / "elsewhere"
        shutil.copytree(victim.parent, elsewhere)
        shutil.rmtree(victim.parent)
        victim.parent.symlink_to(elsewhere, target_is_directory=True)
    else:
        victim.unlink()
        victim.mkdir()
    outside = {p.stat().st_ino for p in ws["root"].rglob("*.html") if out not in p.parents and p.is_file()}
    build.build_site(ws["records"], out, cache=cache)
    assert not victim.is_symlink() and not victim.parent.is_symlink() and victim.is_file() and victim.read_bytes() == data
    assert victim.stat().st_nlink == 1 and victim.stat().st_ino not in outside, "a file with a name outside the site was linked"
    assert tree(out) == tree(_full_build(ws))


def test_a_case_run_pages_key_changes_with_its_invariance_twin():
    """An invariance pair's reasons on a case-run page compare both versions of the pair, so the twin version is part of
    the key of the page of each: an edit of the twin alone gives the other a new key."""
    def digest(records):
        job = PageJob(records, {}, None, {}, (), {}, {}, {}, {}, {}, None, pairs_by_case(records))
        return job._case_digest("a")

    a, b = f.case_version("a"), f.case_version("b")
    pair = m.Pair("p1", "wording", ("a", "b"), "the same case, worded otherwise", False)
    before = f.records((a, b), {}, pairs=(pair,))
    edited = f.records((a, replace(b, title="Case b, edited")), {}, pairs=(pair,))
    unpaired = f.records((a, b), {}, pairs=())
    assert digest(before) != digest(edited)
    assert digest(before) != digest(unpaired)
    assert digest(before) == digest(f.records((a, b), {}, pairs=(pair,)))


@pytest.mark.parametrize("forged", ["a path outside the run's folder", "empty", "a page the run does not have"])
def test_a_forged_list_of_a_runs_pages_is_not_trusted(workspace, capsys, forged):
    """The cache keeps each run's list of its own pages (framed with their digest, as an entry is). A list forged with a
    valid digest is beyond what a digest can catch, but it must neither crash the build nor put a page where the records
    put none. A list shaped otherwise than a run's (its page, then distinct pages in its folder) is ignored: the site is
    the clean build's, byte for byte. One that names a page of that shape the run does not have stops the build with a
    clear error (exit 2, no traceback) and leaves the previous site as it was."""
    records, root = workspace["records"], workspace["root"]
    clean, incremental, cache = root / "clean", root / "incremental", root / "cache"
    build.build_site(records, incremental, cache=cache)
    before = tree(incremental)
    _edit_entry(workspace, random.Random(1), 1)  # something changed, so the build runs, but no run's pages did
    build.build_site(records, clean)
    lists = sorted((cache / "names").iterdir())
    assert lists
    for path in lists:
        data = path.read_bytes()
        names = data[len(b"sitegen-page-names/1\n") + 65:].decode("utf-8").split("\n")
        run_id = names[0][len("runs/"):-len(".html")]
        extra = {"a page the run does not have": [f"runs/{run_id}/observations-forged-9.html"],
                 "a path outside the run's folder": ["../../outside.html"], "empty": None}[forged]
        made = [] if extra is None else [*names, *extra]
        path.write_bytes(framed(b"sitegen-page-names/1\n", "\n".join(made).encode("utf-8")))
    code = main(["build", "--records", str(records), "--out", str(incremental), "--cache", str(cache), "--jobs", "1"])
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert not (root / "outside.html").exists() and not list(root.rglob("*forged*"))
    if forged == "a page the run does not have":
        assert code == 2 and "the cache folder was altered" in err, err
        assert tree(incremental) == before
    else:
        assert code == 0, err
        assert tree(incremental) == tree(clean)



def test_with_detail_runs_a_run_that_a_newer_run_displaces_loses_its_list_pages_in_an_incremental_build_too(workspace, monkeypatch):
    """--detail-runs 1: a newer run takes the whole lists from the run that was newest (Detail.lists), and gives them
    back when it is older again; with the cache, each build gives exactly what a full build gives."""
    from sitegen.render import views

    monkeypatch.setattr(views, "RUN_PAGE_ITEMS", 0)  # the small records' lists of one item get pages of their own
    records = workspace["records"]
    both = {name: (records / name).read_bytes() for name in ("runs.json", "results.json")}
    runs = json.loads(both["runs.json"])
    for run in runs["runs"]:
        if run["id"] == "r2":
            run["date"] = "2026-01-05"  # before r1, which is then the newest run
    (records / "runs.json").write_text(json.dumps(runs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (records / "results.json").unlink()
    assert main(["score", "--all", "--records", str(records)]) == 0
    r1_newest = {name: (records / name).read_bytes() for name in both}
    cache, incremental = workspace["root"] / "cache", workspace["root"] / "incremental"
    build.build_site(records, incremental, cache=cache, detail_runs=1)
    kept = sorted(p.name for p in (incremental / "en" / "runs" / "r1").glob("observations-*.html"))
    assert kept, "r1, the newest run, has its lists' pages"
    for step, state in enumerate((both, r1_newest, both)):  # r2 newer than r1, then older, then newer again
        for name, data in state.items():
            (records / name).write_bytes(data)
        build.build_site(records, incremental, cache=cache, detail_runs=1)
        full = workspace["root"] / f"full-{step}"
        build.build_site(records, full, detail_runs=1)
        assert tree(incremental) == tree(full), f"step {step}"
        shown = sorted(p.name for p in (full / "en" / "runs" / "r1").glob("observations-*.html"))
        assert shown == ([] if state is both else kept)
        shutil.rmtree(full)


def test_a_run_added_with_its_own_answers_file_reads_only_that_file_again(workspace, monkeypatch):
    """The answers files checked before come from the cache (load/answercache.py): only the file whose key changed (the
    new run's, now published) is decoded and checked again, and the site is the one a full build writes."""
    ws = dict(workspace, monkeypatch=monkeypatch)
    cache, out = ws["root"] / "cache", ws["root"] / "site"
    build.build_site(ws["records"], out, cache=cache)
    read = []
    original = answers_module._read_answers
    monkeypatch.setattr(answers_module, "_read_answers", lambda root, name, *a, **k: read.append(name) or original(root, name, *a, **k))
    _toggle_run(ws, random.Random(0), 0)
    build.build_site(ws["records"], out, cache=cache)
    assert read == ["answers-hidden.json"]
    monkeypatch.setattr(answers_module, "_read_answers", original)
    assert tree(out) == tree(_full_build(ws))
