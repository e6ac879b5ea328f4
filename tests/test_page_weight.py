"""Issue 15, page weight: a case-run page shows its run's answer against the key and links to what the case page holds once."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.build import build_site

RECORDS = Path(__file__).resolve().parent.parent / "records"
PAGE = "en/cases/ap/appeal-info-missing/2026-08-18-v1-baseline.html"


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("weight") / "site"
    build_site(RECORDS, out)
    return out


def read(site: Path, path: str) -> str:
    return (site / path).read_text(encoding="utf-8")


def test_a_repetition_answered_exactly_as_an_earlier_one_links_to_it_instead_of_repeating_its_tables(site):
    html = read(site, PAGE)
    r2 = html[html.index('<h2 id="r2"'):html.index('<h2 id="r3"')]
    # its own state stays, and so do its counts, in their column of the page's table of counts; each stage keeps its
    # anchor (run pages link to it) with a link to the first
    counts = html[html.index('<table class="counts">'):html.index('<h2 id="r1"')]
    assert '<th><a href="#r2">2</a></th>' in counts and 'class="st-' in r2
    # one line for the whole repetition, then one line per stage, which keeps the stage's anchor
    assert '<p>The same answer as in <a href="#r1">repetition 1</a>, judged alike.</p>' in r2
    assert "<table" not in r2 and '<section id="r2-reviewer"' not in r2 and r2.count("The same answer") == 1
    # each finding keeps its anchor (reasons link to it) as a link on to its row in the first repetition, which shows them
    assert re.search(r'<p id="r2-reviewer">Reviewers: <a id="r2-reviewer-f-r1-f1" href="#r1-reviewer-f-r1-f1">r1-f1</a>[,<]', r2)
    assert 'id="r1-reviewer-f-r1-f1"' in html
    sv = read(site, PAGE.replace("en/", "sv/", 1))
    assert 'Samma svar som i <a href="#r1">upprepning 1</a>, bedömt likadant.' in sv


def test_a_repetition_that_differs_keeps_its_own_tables(site):
    """cure-unchecked in the 09-16 release: the second repetition answered otherwise than the first, so both show their rows."""
    html = read(site, "en/cases/cu/cure-unchecked/2026-09-16-release.html")
    assert 'id="r1-reviewer-f-' in html and 'id="r2-reviewer-f-' in html
    assert "The same answer as in" not in html[html.index('<h2 id="r2"'):html.index('<h2 id="r3"')]


def test_an_expected_finding_links_to_its_key_row_and_passage_on_the_case_page_instead_of_repeating_the_passage(site):
    """A missed expected finding keeps a row, which links its key row and its passage on the case page; a matched one
    is named in one line with the finding that matched it (tests/test_compact_case_run.py)."""
    html = read(site, "en/cases/re/repeat-deviation/2026-09-02-nightly.html")
    row = html[html.index('<tr id="r1-reviewer-escalation-missing">'):]
    row = row[: row.index("</tr>")]
    assert '<a href="index.html#key-escalation-missing">escalation-missing</a>' in row
    assert '<td><a href="index.html#L6">line 6</a></td>' in row
    assert "excerpt" not in row
    case = read(site, "en/cases/re/repeat-deviation/index.html")
    assert 'id="key-escalation-missing"' in case and 'id="L6"' in case  # the targets exist, once, on the case page


def test_a_verbatim_quote_is_shown_once_marked_in_its_line(site):
    html = read(site, PAGE)
    row = html[html.index('<tr id="r1-reviewer-f-r1-f2">'):]
    row = row[: row.index("</tr>")]
    assert '<mark>Åtgärden ska vara utförd senast 2026-09-30.</mark>' in row
    assert row.count("Åtgärden ska vara utförd senast 2026-09-30.") == 1 and "<q" not in row


def test_a_quote_that_is_not_the_documents_text_verbatim_is_still_printed_as_given(site):
    """A quote that differs from its lines (whitespace, a wider or misquoted passage) is shown as the engine gave it."""
    quoted = 0
    for page in (site / "en" / "cases").rglob("*.html"):
        for q in re.findall(r'<q class="quote"[^>]*>(.*?)</q>(.*?)</td>', page.read_text(encoding="utf-8"), re.S):
            quote, rest = q
            marks = re.findall(r"<mark>(.*?)</mark>", rest)
            assert not (len(marks) == 1 and marks[0] == quote), page
            quoted += 1
    assert quoted > 0


def test_case_run_pages_weigh_little_more_than_half_of_what_they_did(site):
    """The bundled publication's case-run pages averaged 20,082 bytes before (main at 4cacd2c), 10,446 after; a guard
    against the repeated tables coming back, with room for small changes."""
    sizes = [p.stat().st_size for p in (site / "en" / "cases").rglob("*.html") if p.name != "index.html"]
    sizes += [p.stat().st_size for p in (site / "sv" / "cases").rglob("*.html") if p.name != "index.html"]
    assert len(sizes) == 300
    assert sum(sizes) / len(sizes) < 0.6 * 20082


def test_a_finding_an_earlier_row_shows_links_to_that_row_and_gives_its_verdict_unless_the_same(site):
    """The rerun of cure-unchecked's second repetition (09-16 release) repeats reviewer finding r1-f1 word for word,
    judged alike, and has no other finding: the stage lists it, linked to the row that shows it, under one line that
    says so, without a table."""
    html = read(site, "en/cases/cu/cure-unchecked/2026-09-16-release.html")
    row = html[html.index('<li id="r2-rerun-reviewer-f-r1-f1">'):]
    row = row[: row.index("</li>")]
    assert row.endswith(': <a href="#r2-reviewer-f-r1-f1">r1-f1</a>') and row.startswith('<li id="r2-rerun-reviewer-f-r1-f1">r1-f1 '), row
    lead = html[:html.index('<li id="r2-rerun-reviewer-f-r1-f1">')]
    assert lead.endswith("<p>The engine's findings, each judged and worded as the finding it links to above:</p>\n<ul class=\"alike\">\n")
    first = html[html.index('<tr id="r2-reviewer-f-r1-f1">'):]
    first = first[: first.index("</tr>")]
    assert 'class="st-' in first and 'class="st-' not in row  # the verdict is the earlier row's, given there
    # a row whose verdict differs from the earlier row's gives its own (tests/test_compact_case_run.py)
    differs = [r for r in re.findall(r'<tr id="[^"]+">(.*?)</tr>', html, re.S) if '<td class="again">As ' in r]
    assert all('class="st-' in r for r in differs)
    assert "excerpt" not in row and "<p" not in row  # neither its lines nor its wording again
    first = html[html.index('<tr id="r2-reviewer-f-r1-f1">'):]
    assert re.search(r'<p lang="sv">[^<]', first[: first.index("</tr>")])  # the row linked to shows everything, its wording too
    sv = read(site, "sv/cases/cu/cure-unchecked/2026-09-16-release.html")
    assert "<p>Motorns fynd, vart och ett bedömt och formulerat som fyndet det länkar till ovan:</p>" in sv


def _broken_links(site: Path) -> list[str]:
    """Every link between pages of the site that points at no file, or at no element of the page it names."""
    ids: dict[Path, set[str]] = {}
    broken = []
    for page in site.rglob("*.html"):
        for href in re.findall(r'href="([^"]+)"', page.read_text(encoding="utf-8")):
            if href.startswith(("http://", "https://", "mailto:")):
                continue
            path, _, fragment = href.partition("#")
            if path.startswith("/"):  # only the 404 page, which starts from the base URL's path ("/" in these records)
                target = (site / path.lstrip("/")).resolve()
            else:
                target = (page.parent / path).resolve() if path else page
            if not target.is_file():
                broken.append(f"{page.relative_to(site)}: {href}")
            elif fragment and target.suffix == ".html":
                if target not in ids:
                    ids[target] = set(re.findall(r'id="([^"]+)"', target.read_text(encoding="utf-8")))
                if fragment not in ids[target]:
                    broken.append(f"{page.relative_to(site)}: {href}")
    return broken


def test_detail_runs_keeps_a_page_per_run_for_the_newest_runs_only_and_every_link_still_lands(tmp_path, site):
    """README, "Growth": --detail-runs K renders case-run pages for each case version's newest K runs; the older runs
    are summarised on the case page, and no link of the site points at a page that is not there."""
    out = tmp_path / "site"
    build_site(RECORDS, out, detail_runs=1)
    case = out / "en" / "cases" / "ap" / "appeal-info-missing"
    assert sorted(p.name for p in case.iterdir()) == ["2026-12-01-scorer-7.html", "index.html"]
    index = (case / "index.html").read_text(encoding="utf-8")
    assert "Answers against the key are shown for the newest run;" in index
    assert '<a href="../../../runs/2026-08-18-v1-baseline.html">2026-08-18-v1-baseline</a>' in index  # an older run: its run page
    assert "2026-08-18-v1-baseline.html#r1" not in index
    sv = (out / "sv" / "cases" / "ap" / "appeal-info-missing" / "index.html").read_text(encoding="utf-8")
    assert "Svar mot facit visas för den senaste körningen;" in sv
    assert _broken_links(out) == []
    full = sum(1 for _ in site.rglob("*.html"))
    assert sum(1 for _ in out.rglob("*.html")) < full


def test_every_link_of_the_full_site_lands(site):
    assert _broken_links(site) == []


def test_detail_runs_must_be_at_least_one(tmp_path, capsys):
    from sitegen.cli import main

    assert main(["build", "--records", str(RECORDS), "--out", str(tmp_path / "site"), "--detail-runs", "0"]) == 2
    assert "--detail-runs" in capsys.readouterr().err and not (tmp_path / "site").exists()


def _list_pages(site: Path, lang: str, run: str) -> list[str]:
    folder = site / lang / "runs" / run
    return sorted(p.name for p in folder.glob("*.html") if not p.name.startswith("grid-")) if folder.is_dir() else []


def test_detail_runs_keeps_whole_lists_for_the_runs_it_keeps_and_points_older_runs_lists_to_the_downloads(tmp_path, monkeypatch):
    """README, "Growth": with --detail-runs K, a run no case version keeps a page for shows the first items of its lists
    of observations and regressions on its own page, with every item in the downloads; its grid of states stays whole,
    and a run some case version keeps has every list page it has without the option."""
    from sitegen.render import views

    monkeypatch.setattr(views, "RUN_PAGE_ITEMS", 1)  # so that the bundled runs' short lists have pages of their own
    full, kept = tmp_path / "full", tmp_path / "kept"
    build_site(RECORDS, full)
    build_site(RECORDS, kept, detail_runs=1)
    old, newest = "2026-08-18-v1-baseline", "2026-12-01-scorer-7"
    assert _list_pages(full, "en", old) and _list_pages(full, "en", newest)
    assert _list_pages(kept, "en", old) == [] and _list_pages(kept, "sv", old) == []
    assert _list_pages(kept, "en", newest) == _list_pages(full, "en", newest)
    grids = [sorted(p.name for p in (site / "en" / "runs" / old).glob("grid-*.html")) for site in (full, kept)]
    assert grids[0] == grids[1]
    page = read(kept, f"en/runs/{old}.html")
    assert "Whole lists are kept for the newest runs only; every item of this one is in the results file among the " \
           '<a href="../downloads.html">downloads</a>.' in page
    assert "page by page" not in page
    shown = len(re.findall(r"<ul class=\"observations\">\n<li>", page))
    assert shown and shown == len(re.findall(r"<ul class=\"observations\">\n<li>", read(full, f"en/runs/{old}.html")))
    assert "Hela listor sparas bara för de senaste körningarna" in read(kept, f"sv/runs/{old}.html")
    assert "page by page" in read(kept, f"en/runs/{newest}.html")
    assert _broken_links(kept) == []


def test_a_case_run_page_has_a_lighter_frame_that_keeps_the_ways_on(site):
    """The footer's sentence, source link and date were on every case-run page; they keep the header every page has
    (title, the main navigation, the language switch), one click to the case and the run, and a footer linking the
    method and the accessibility statement. Other pages keep the whole frame."""
    for lang, method in (("en", "Every measure counts passed of observed observations"), ("sv", "Varje mått räknar godkända av gjorda observationer")):
        html = read(site, PAGE.replace("en/", f"{lang}/", 1))
        header = html[html.index("<header"):html.index("</header>")]
        assert 'class="site-title"><a href="../../../index.html">' in header and 'hreflang="' in header
        assert all(f'href="../../../{page}"' in header for page in ("index.html", "method.html", "changelog.html", "downloads.html"))
        opening = html[html.index("<h1>"):html.index("</p>", html.index("<h1>"))]
        assert '<a href="index.html">' in opening and '<a href="../../../runs/2026-08-18-v1-baseline.html">' in opening
        footer = html[html.index("<footer"):]
        assert f'<a href="../../../method.html">{method}</a>' in footer and '<a href="../../../accessibility.html">' in footer
        whole = read(site, f"{lang}/cases/ap/appeal-info-missing/index.html")
        assert "downloads.html" in whole[whole.index("<header"):whole.index("</header>")]


def test_a_row_whose_lines_an_earlier_row_shows_marked_alike_names_them_and_links_that_row(site):
    """A duplicate finding quoting (or locating) what another finding of the page quoted showed the same excerpt of the
    document again; now its row names the lines and links the row that shows them, marked alike, so no page shows one
    excerpt twice, and every such link lands on a row with those lines."""
    linked = 0
    for lang, words in (("en", "as shown for"), ("sv", "som visas för")):
        for page in (site / lang / "cases").rglob("*.html"):
            if page.name == "index.html":
                continue
            html = page.read_text(encoding="utf-8")
            excerpts = re.findall(r'<ol class="excerpt"[^>]*>.*?</ol>', html)
            assert len(excerpts) == len(set(excerpts)), page
            for lines, target in re.findall(rf'<br>(\S+ [\d–]+), {words} <a href="#([^"]+)">[^<]+</a> (?:above|ovan)<', html):
                row = html[html.index(f'<tr id="{target}">'):]
                row = row[: row.index("</tr>")]
                numbers = re.findall(r'<li value="(\d+)">', row)
                span = numbers[0] if len(numbers) == 1 else f"{numbers[0]}–{numbers[-1]}"
                assert numbers and lines.endswith(" " + span), (page, lines, target)
                linked += 1
    assert linked > 0
