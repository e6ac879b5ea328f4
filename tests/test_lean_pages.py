"""Issue 15, page weight (second part): a case-run page says what it shows in fewer bytes, and loses nothing a reader needs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from sitegen.build import build_site
from sitegen.render.environment import relative_href

RECORDS = Path(__file__).resolve().parent.parent / "records"


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
    assert 'href="../../en/cases/cu/cure-unchecked/2026-09-16-release.html#r1"' in html
