"""Issue 15, page weight (second part): a case-run page says what it shows in fewer bytes, and loses nothing a reader needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.build import build_site
from sitegen.render.links import relative_href

RECORDS = Path(__file__).resolve().parent.parent / "records"
CALLS_PER_PAGE = 80  # Context.call per page of the bundled site's whole build: 117.3 at 56371d1, 87.7 at 41f3bc2, 78.2 after
# observation rows and grid rows were worked out in Python (views.listed_observations, views.grid_rows)


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("lean") / "site"
    build_site(RECORDS, out)
    return out


def case_run_pages(site: Path) -> dict[str, str]:
    found = {}
    for lang in ("en", "sv"):
        for page in (site / lang / "cases").rglob("*.html"):
            if page.name != "index.html":
                found[str(page.relative_to(site))] = page.read_text(encoding="utf-8")
    assert len(found) == 300
    return found


def test_relative_href_writes_a_link_on_the_same_page_as_its_fragment_and_one_beside_it_as_a_file_name():
    here = "cases/cu/cure-unchecked/2026-09-16-release.html"
    assert relative_href(here, here + "#r1") == "#r1"
    assert relative_href(here, "cases/cu/cure-unchecked/index.html#key-a") == "index.html#key-a"
    assert relative_href(here, "cases/cu/cure-unchecked/other.html") == "other.html"
    assert relative_href(here, "cases/cu/cure-unchecked-2/index.html#key-a") is None  # a folder whose name only starts alike
    assert relative_href(here, "runs/x.html#a") is None
    assert relative_href("index.html", "runs/x.html") is None  # a page at the top of its language folder: from `base`


def test_a_case_run_pages_reasons_link_to_its_own_rows_by_fragment_and_to_its_case_page_by_file_name(site):
    """Its reasons linked to its own rows and its case page through the site root: "../../../../en/cases/…/run.html#r1"."""
    pages = case_run_pages(site)
    reasons = 0
    for path, html in pages.items():
        folder = path.rsplit("/", 1)[0]  # lang/cases/xx/id (the language switch leads to the other language's folder)
        long_links = [h for h in re.findall(r'href="([^"]+)"', html) if h.startswith("../") and f"/{folder}/" in h]
        assert not long_links, (path, long_links[:3])
        reasons += html.count('<div class="reason">')
    assert reasons > 50
    page = pages["en/cases/cu/cure-unchecked/2026-09-16-release.html"]
    assert '<a href="#r1">Repetition 1</a> and <a href="#r2">repetition 2</a> differ in 2 respects:' in page
    assert '<a href="index.html#key-checker-missing"><code>checker-missing</code></a>' in page


def test_a_run_pages_reasons_still_link_to_the_case_run_pages_from_the_language_folder(site):
    html = (site / "en" / "runs" / "2026-09-16-release.html").read_text(encoding="utf-8")
    assert 'href="../cases/cu/cure-unchecked/2026-09-16-release.html#r1"' in html


def tables(html: str, kind: str) -> list[str]:
    return re.findall(rf'<table class="{kind} stack">.*?</table>', html, re.S)


def test_a_case_run_pages_verdict_tables_have_three_columns_whose_cells_read_alone_without_a_label_per_cell(site):
    """They had five and eight columns, each cell carrying its column's name in data-label for narrow screens; now three,
    each row headed by its finding or expected finding and each cell saying what it is, so no row of column headings
    either (a crashed run's findings, not judged, keep theirs: finding, what it says)."""
    pages = case_run_pages(site)
    counted = 0
    for path, html in pages.items():
        sv = path.startswith("sv/")
        for table in tables(html, "verdicts") + tables(html, "findings"):
            assert "data-label" not in table and "scope=" not in table, path
            # finding, verdict, what it says (a crashed run's findings are not judged: no verdict)
            if "not judged" in table or "inte prövade" in table:
                assert table.count("<th>", 0, table.index("</thead>")) == 2, path
                continue
            assert "<thead>" not in table, path
            for row in re.findall(r'<tr id="[^"]+">(.*?)</tr>', table, re.S):
                assert row.startswith("<th>") and row.count("<th>") == 1 and row.count("<td") == (1 if 'colspan="2"' in row else 2), (path, row)
        for table in tables(html, "findings"):
            for row in re.findall(r'<tr id="[^"]+">(.*?)</tr>', table, re.S):
                if 'class="again"' in row:
                    continue
                says = row[row.rindex("<td>"):]
                assert re.search(r"(primär regel|primary rule) [^<\s]" if sv else r"primary rule [^<\s]", says), (path, row)
                # whether it says something is missing is said only when it does
                assert "inte att något saknas" not in says and "does not say something is missing" not in says
                counted += 1
    assert counted > 200


def test_a_report_finding_names_what_it_was_merged_from_beside_its_id(site):
    html = case_run_pages(site)["en/cases/cu/cure-unchecked/2026-09-16-release.html"]
    report = html[html.index('<section id="r1-report"'):]
    row = report[report.index("<tr id=\"r1-report-f-"):]
    head = row[: row.index("</th>")]
    assert re.search(r"<small>(merged from [a-z0-9-]+(, [a-z0-9-]+)*|no trace)</small>", head), head
    sv = case_run_pages(site)["sv/cases/cu/cure-unchecked/2026-09-16-release.html"]
    assert "<small>sammanslaget från r" in sv


def test_an_observation_of_a_pair_of_repetitions_is_explained_once_under_its_first_repetition(site):
    """cure-unchecked, 09-16 release: the pair 1–2 differed; its reasons were written out under repetition 1 and again
    under repetition 2."""
    for lang, words in (("en", 'explained under <a href="#r1-why">repetition 1</a>'),
                        ("sv", 'förklaras under <a href="#r1-why">upprepning 1</a>')):
        html = case_run_pages(site)[f"{lang}/cases/cu/cure-unchecked/2026-09-16-release.html"]
        r1 = html[html.index('<h2 id="r1"'):html.index('<h2 id="r2"')]
        r2 = html[html.index('<h2 id="r2"'):html.index('<h2 id="r3"')]
        pair = "repetitions 1 and 2" if lang == "en" else "upprepning 1 och 2"
        # one observation per stage, explained in the first repetition; in the second one line names both stages, linked there
        assert r1.count(pair) == 2 and r2.count(pair) == 1
        assert r2.count(words) == 1 and '<h3 id="r1-why">' in r1
        reasons_of_the_pair = [li for li in re.findall(r"<li>.*?</li>\n", r2, re.S) if pair in li]
        assert reasons_of_the_pair and not any('class="reason"' in li for li in reasons_of_the_pair)
        assert all('class="reason"' in li for li in re.findall(r"<li>.*?</div></li>", r1, re.S) if pair in li)


def test_a_state_is_one_short_element_with_its_symbol_hidden_from_screen_readers_and_its_word(site):
    """States were two nested spans, `<span class="state state-pass"><span class="symbol" aria-hidden="true">✓</span> …`;
    then one span with the symbol in an <i>; now its class alone names the symbol, which the stylesheet draws
    (tests/test_lighter_site.py)."""
    badges = 0
    for page in site.rglob("*.html"):
        html = page.read_text(encoding="utf-8")
        assert 'class="state' not in html and '<span class="symbol"' not in html, page
        for word in re.findall(r'<span class="st-[a-z-]+(?: [a-z])?(?: wrap)?">([^<]+)', html):
            assert word.strip(), (page, word)
            badges += 1
    assert badges > 1000


def test_a_case_run_page_costs_few_template_calls(tmp_path, monkeypatch):
    """Issue 15, target 2: the build's time was Jinja's Context.call. Counted, never timed, over a whole build of the
    bundled publication (CALLS_PER_PAGE); on the 100-case synthetic publication 402.6 per page at 56371d1, 213.6 once
    reasons' links were made in Python, 171.3 once observation and grid rows were too (benchmarks/count_calls.py)."""
    from jinja2.runtime import Context

    calls = 0
    original = Context.call

    def counted(self, *args, **kwargs):
        nonlocal calls
        calls += 1
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Context, "call", counted)
    out = tmp_path / "site"
    build_site(RECORDS, out)
    pages = sum(1 for _ in out.rglob("*.html"))
    assert calls / pages < CALLS_PER_PAGE, (calls, pages)
