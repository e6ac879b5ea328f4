"""Proves the browser harness on a tiny throwaway site: a check that cannot fail would prove nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from . import harness

PUBLIC = "https://quality.example.org/"

GOOD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Good</title><link rel="stylesheet" href="style.css"></head>
<body><main><h1 id="top">Good page</h1><p><a href="page2.html#there">Page two</a>
<a href="https://github.com/example/elsewhere">Source</a> <a href="#top">Top</a>
<a href="https://quality.example.org/page2.html">Absolute</a></p></main></body></html>
"""
PAGE2 = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Two</title></head>
<body><main><h1>Two</h1><p id="there">Here.</p><a href="data.json">Data</a></main></body></html>
"""
BAD = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Bad</title><link rel="stylesheet" href="missing.css"></head>
<body><main><h1>Bad</h1><img src="https://example.invalid/tracker.png" alt="tracker">
<a href="missing.html">Gone</a> <a href="page2.html#nowhere">No anchor</a>
<a href="https://quality.example.org/gone.html">Gone too</a>
<script>console.error("boom")</script></main></body></html>
"""
INACCESSIBLE = """<!doctype html>
<html><head><meta charset="utf-8"><title>Inaccessible</title></head>
<body><main><h1>Inaccessible</h1><img src="data:image/gif;base64,R0lGODlhAQABAAAAACw=">
<p style="color:#bbb;background:#fff">Faint text</p></main></body></html>
"""
WIDE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width">
<title>Wide</title></head><body><main><h1>Wide</h1><div id="banner" style="width:900px">x</div></main></body></html>
"""


@pytest.fixture
def tiny_site(tmp_path) -> Path:
    site = tmp_path / "site"
    site.mkdir()
    pages = {"index.html": GOOD, "page2.html": PAGE2, "bad.html": BAD, "inaccessible.html": INACCESSIBLE, "wide.html": WIDE}
    for name, text in pages.items():
        (site / name).write_text(text, encoding="utf-8")
    (site / "style.css").write_text("body { margin: 0 }\n", encoding="utf-8")
    (site / "data.json").write_text("{}\n", encoding="utf-8")
    return site


@pytest.fixture
def tiny_url(tiny_site):
    with harness.serve(tiny_site) as url:
        yield url


def test_classify_knows_every_page_type_of_the_site():
    expected = {
        "sv/index.html": ("overview", "sv"),
        "en/": ("overview", "en"),
        "sv/runs/2026-09-02-release.html": ("run", "sv"),
        "en/method.html": ("method", "en"),
        "sv/cases/cu/cure-unchecked/index.html": ("case", "sv"),
        "en/cases/cu/cure-unchecked/": ("case", "en"),
        "sv/cases/cu/cure-unchecked/2026-09-02-release.html": ("case-run", "sv"),
        "en/changelog.html": ("changelog", "en"),
        "sv/downloads.html": ("downloads", "sv"),
        "404.html": ("not-found", None),
    }
    assert {path: harness.classify(path) for path in expected} == expected
    assert harness.classify("downloads/granska-quality-results.json") is None


def test_read_sitemap_maps_public_urls_to_the_local_server():
    xml = f"""<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>{PUBLIC}sv/index.html</loc></url><url><loc>{PUBLIC}en/method.html</loc></url></urlset>"""
    local = "http://127.0.0.1:9/"
    assert harness.read_sitemap(xml, public_base=PUBLIC, local_base=local) == (
        local + "sv/index.html",
        local + "en/method.html",
    )


def test_read_sitemap_refuses_a_url_outside_the_base():
    xml = """<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<url><loc>https://elsewhere.example.org/sv/index.html</loc></url></urlset>"""
    with pytest.raises(AssertionError, match="not under the site's base_url"):
        harness.read_sitemap(xml, public_base=PUBLIC, local_base="http://127.0.0.1:9/")


def test_missing_chromium_fails_instead_of_skipping(monkeypatch, tmp_path):
    monkeypatch.setattr(harness, "CHROMIUM", tmp_path / "no-chromium")
    with pytest.raises(pytest.fail.Exception, match="apt-get install chromium"):
        harness.require_chromium()


def test_missing_axe_fails_instead_of_skipping(tmp_path):
    with pytest.raises(pytest.fail.Exception, match="npm ci"):
        harness.require_axe(tmp_path)


@pytest.mark.browser
def test_visit_of_a_clean_page_finds_no_problem(chromium, tiny_url):
    visit = harness.visit(chromium, tiny_url + "index.html")
    assert visit.status == 200
    assert visit.problems == ()
    assert "top" in visit.ids
    assert tiny_url + "page2.html#there" in visit.links


@pytest.mark.browser
def test_visit_catches_other_hosts_failed_requests_and_console_errors(chromium, tiny_url):
    visit = harness.visit(chromium, tiny_url + "bad.html")
    assert visit.foreign_requests == ("https://example.invalid/tracker.png",)
    assert any("missing.css" in r and "404" in r for r in visit.failed_requests)
    assert any("boom" in e for e in visit.console_errors)


@pytest.mark.browser
def test_visit_reports_a_missing_page_by_its_status(chromium, tiny_url):
    assert harness.visit(chromium, tiny_url + "nothing-here.html").status == 404


@pytest.mark.browser
def test_broken_links_finds_missing_pages_and_anchors_only(chromium, tiny_url):
    visits = tuple(harness.visit(chromium, tiny_url + name) for name in ("index.html", "page2.html", "bad.html"))
    broken = harness.broken_links(visits, public_base=PUBLIC, local_base=tiny_url)
    assert len(broken) == 3, broken
    assert any("missing.html" in b and "404" in b for b in broken)
    assert any("'nowhere'" in b for b in broken)
    assert any("gone.html" in b for b in broken)
    assert not any(b.startswith(tiny_url + "index.html") or b.startswith(tiny_url + "page2.html") for b in broken)


@pytest.mark.browser
def test_axe_finds_violations_only_where_they_are(chromium, tiny_url):
    axe = harness.require_axe(harness.ROOT)
    context = chromium.new_context(bypass_csp=True)
    try:
        page = context.new_page()
        page.goto(tiny_url + "inaccessible.html")
        rules = {v["id"] for v in harness.run_axe(page, axe)}
        page.goto(tiny_url + "index.html")
        clean = harness.run_axe(page, axe)
    finally:
        context.close()
    assert {"html-has-lang", "image-alt", "color-contrast"} <= rules
    assert clean == [], harness.describe_violations(clean)


@pytest.mark.browser
def test_overflow_is_measured_and_the_culprit_named(chromium, tiny_url):
    context = chromium.new_context(viewport={"width": 360, "height": 640})
    try:
        page = context.new_page()
        page.goto(tiny_url + "wide.html")
        width, wide = harness.horizontal_overflow(page, 360)
        page.goto(tiny_url + "index.html")
        narrow, none = harness.horizontal_overflow(page, 360)
    finally:
        context.close()
    assert width > 361
    assert any(w.startswith("div#banner") for w in wide)
    assert narrow <= 361 and none == []
