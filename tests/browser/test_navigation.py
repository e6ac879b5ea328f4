"""A reader can switch language, browse without JavaScript, and reach a failure's explanation in three clicks."""

from __future__ import annotations

import json
import re
import urllib.parse

import pytest

from . import harness

pytestmark = pytest.mark.browser

OTHER = {"sv": "en", "en": "sv"}


def normalize(url: str) -> str:
    """A page's address without fragment, with a directory and its index.html counted as one."""
    path = url.split("#")[0]
    return path[: -len("index.html")] if path.endswith("/index.html") else path


def language_link(page, lang: str):
    """The visible link that switches to lang: in the header if there is one, else anywhere."""
    for selector in (f'header a[hreflang="{lang}"]', f'a[hreflang="{lang}"]'):
        links = page.locator(selector)
        if links.count():
            return links.first
    pytest.fail(f"{page.url}: no language link a[hreflang={lang!r}] on the page", pytrace=False)


def click_through(page, link) -> None:
    with page.expect_navigation():
        link.click()


def link_matching(page, pattern: re.Pattern, site_url: str):
    """The first link whose resolved target path matches pattern."""
    hrefs = page.eval_on_selector_all("a[href]", "links => links.map(a => a.href)")
    for index, href in enumerate(hrefs):
        if harness.is_local(href) and pattern.search(harness.site_path(href, site_url)):
            return page.locator("a[href]").nth(index), href
    pytest.fail(f"{page.url}: no link whose path matches {pattern.pattern}", pytrace=False)


@pytest.fixture(scope="module")
def tab(chromium):
    """One tab for the tests that only click links; a fresh context per test costs more than the test."""
    context = chromium.new_context()
    yield context.new_page()
    context.close()


def test_language_switch_round_trips(tab, bilingual_page, site_url):
    lang, other = bilingual_page.lang, OTHER[bilingual_page.lang]
    tab.goto(bilingual_page.url)
    click_through(tab, language_link(tab, other))
    there = harness.site_path(tab.url, site_url)
    assert there.startswith(f"{other}/"), f"{bilingual_page.url}: the {other} link leads to /{there}"
    assert tab.get_attribute("html", "lang") == other
    assert harness.classify(there) == (bilingual_page.page_type, other), f"/{there} is another page type"
    click_through(tab, language_link(tab, lang))
    assert normalize(tab.url) == normalize(bilingual_page.url)


def scored_runs(records_dir) -> list[str]:
    """Runs with numbers: a crashed run's page has no cases to follow."""
    path = records_dir / "results.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: the bundled records have no scored results", pytrace=False)
    runs = [run["run"] for run in json.loads(path.read_text(encoding="utf-8"))["runs"] if run.get("cases")]
    if not runs:
        pytest.fail("the bundled results have no run with scored cases", pytrace=False)
    return runs


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_pages_work_without_javascript(chromium, site_url, records_dir, lang):
    run_page = re.compile(rf"^{lang}/runs/({'|'.join(map(re.escape, scored_runs(records_dir)))})\.html$")
    context = chromium.new_context(java_script_enabled=False)
    foreign: list[str] = []
    harness.guard_hosts(context, foreign)
    try:
        page = context.new_page()
        assert page.goto(f"{site_url}{lang}/index.html").status == 200
        link, href = link_matching(page, run_page, site_url)
        click_through(page, link)
        assert normalize(page.url) == normalize(href)
        assert page.locator("h1").first.is_visible()
        link, href = link_matching(page, re.compile(rf"^{lang}/cases/"), site_url)
        click_through(page, link)
        assert normalize(page.url) == normalize(href)
        assert harness.classify(harness.site_path(page.url, site_url))[0] in ("case", "case-run")
        assert page.locator("h1").first.is_visible()
    finally:
        context.close()
    assert not foreign


def failed_observation(records_dir) -> tuple[str, dict]:
    """A published run's failed observation, preferring GROUNDING, whose subject names an expected finding."""
    path = records_dir / "results.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: the bundled records have no scored results", pytrace=False)
    runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
    failed = [
        (run["run"], obs)
        for run in runs
        for obs in run.get("observations", [])
        if obs["result"] == "failed"
    ]
    if not failed:
        pytest.fail("the bundled results have no failed observation to follow", pytrace=False)
    failed.sort(key=lambda item: item[1]["measure"] != "GROUNDING")
    return failed[0]


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_three_clicks_lead_from_overview_to_a_failure_explained(tab, site_url, records_dir, lang):
    run, obs = failed_observation(records_dir)
    case_run = re.compile(rf"^{lang}/cases/[^/]+/{re.escape(obs['case_version'])}/{re.escape(run)}\.html$")
    tab.goto(f"{site_url}{lang}/index.html")
    link, _ = link_matching(tab, re.compile(rf"^{lang}/runs/{re.escape(run)}\.html$"), site_url)
    click_through(tab, link)
    link, href = link_matching(tab, case_run, site_url)
    click_through(tab, link)
    assert case_run.search(harness.site_path(tab.url, site_url))
    fragment = urllib.parse.unquote(urllib.parse.urlsplit(href).fragment)
    if fragment:
        assert tab.locator(f'[id="{fragment}"]').count() == 1, f"{href}: no element with id {fragment!r}"
    if obs["subject"] != "-":
        text = " ".join(tab.locator("body").inner_text().split())
        assert " ".join(obs["subject"].split()) in text, (
            f"{tab.url} does not name {obs['subject']!r}, the subject of the failed {obs['measure']} observation"
        )
