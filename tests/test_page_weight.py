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
    r2 = html[html.index('<section id="r2"'):html.index('<section id="r3"')]
    # its own state and counts stay, and each stage keeps its anchor (run pages link to it) with a link to the first
    assert 'class="counts"' in r2 and '<section id="r2-reviewer"' in r2
    assert 'The same answer as in <a href="#r1-reviewer">repetition 1</a>, judged alike.' in r2
    assert "<table" not in r2 and 'id="r2-reviewer-f-' not in r2
    assert 'id="r1-reviewer-f-r1-f1"' in html  # the first repetition shows the findings
    sv = read(site, PAGE.replace("en/", "sv/", 1))
    assert 'Samma svar som i <a href="#r1-reviewer">upprepning 1</a>, bedömt likadant.' in sv


def test_a_repetition_that_differs_keeps_its_own_tables(site):
    """cure-unchecked in the 09-16 release: the second repetition answered otherwise than the first, so both show their rows."""
    html = read(site, "en/cases/cu/cure-unchecked/2026-09-16-release.html")
    assert 'id="r1-reviewer-f-' in html and 'id="r2-reviewer-f-' in html
    assert "The same answer as in" not in html[html.index('<section id="r2"'):html.index('<section id="r3"')]


def test_an_expected_finding_links_to_its_key_row_and_passage_on_the_case_page_instead_of_repeating_the_passage(site):
    html = read(site, PAGE)
    row = html[html.index('<tr id="r1-reviewer-deadline-stated">'):]
    row = row[: row.index("</tr>")]
    assert '<a href="index.html#key-deadline-stated"><code>deadline-stated</code></a>' in row
    assert '<td data-label="Passage"><a href="index.html#L6">line 6</a></td>' in row
    assert "excerpt" not in row
    case = read(site, "en/cases/ap/appeal-info-missing/index.html")
    assert 'id="key-deadline-stated"' in case and 'id="L6"' in case  # the targets exist, once, on the case page


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


def test_case_run_pages_weigh_less_than_half_of_what_they_did(site):
    """The bundled publication's case-run pages averaged 20,082 bytes before (main at 4cacd2c); now well under half."""
    sizes = [p.stat().st_size for p in (site / "en" / "cases").rglob("*.html") if p.name != "index.html"]
    sizes += [p.stat().st_size for p in (site / "sv" / "cases").rglob("*.html") if p.name != "index.html"]
    assert len(sizes) == 300
    assert sum(sizes) / len(sizes) < 20082 / 2
