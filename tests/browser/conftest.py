"""Builds the bundled site once per session, serves it locally and hands the tests one shared Chromium."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from . import harness

ROOT = harness.ROOT
LANGUAGES = ("sv", "en")
# Every page type in both languages, plus the one language-neutral 404 page.
PAGE_KINDS = [(t, lang) for t in harness.PAGE_TYPES if t != "not-found" for lang in LANGUAGES] + [("not-found", None)]
# A fixed build date, so screenshots and pages do not change from run to run.
SOURCE_DATE_EPOCH = "1788220800"


def kind_id(kind: tuple[str, str | None]) -> str:
    return f"{kind[1]}-{kind[0]}" if kind[1] else kind[0]


@pytest.fixture(scope="session")
def chromium():
    """One headless Debian Chromium for the whole session; each test opens its own contexts."""
    harness.require_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = harness.launch_chromium(playwright)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture(scope="session")
def axe_script() -> Path:
    return harness.require_axe(ROOT)


@pytest.fixture(scope="session")
def records_dir() -> Path:
    return ROOT / "records"


@pytest.fixture(scope="session")
def site_config(records_dir) -> dict:
    path = records_dir / "sitegen.json"
    if not path.is_file():
        pytest.fail(f"{path} is missing: the bundled records are needed to build the site", pytrace=False)
    return json.loads(path.read_text(encoding="utf-8"))


@pytest.fixture(scope="session")
def built_site(tmp_path_factory, records_dir) -> Path:
    """The bundled records built into a fresh folder through the command line's own entry point."""
    try:
        from sitegen.cli import main
    except ImportError as error:
        pytest.fail(f"cannot import sitegen.cli.main: {error}", pytrace=False)
    out = tmp_path_factory.mktemp("built") / "site"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("SOURCE_DATE_EPOCH", os.environ.get("SOURCE_DATE_EPOCH", SOURCE_DATE_EPOCH))
        status = main(["build", "--records", str(records_dir), "--out", str(out), "--quiet"])
    if status != 0:
        pytest.fail(f"`sitegen build` exited with {status}", pytrace=False)
    return out


@pytest.fixture(scope="session")
def site_url(built_site):
    with harness.serve(built_site) as url:
        yield url


@pytest.fixture(scope="session")
def public_base(site_config) -> str:
    return site_config["base_url"]


@pytest.fixture(scope="session")
def site_urls(site_url, public_base) -> tuple[str, ...]:
    """Every page the sitemap lists, mapped to the local server, plus the 404 page."""
    status, body, _ = harness.fetch(site_url + "sitemap.xml")
    if status != 200:
        pytest.fail(f"/sitemap.xml: HTTP {status}", pytrace=False)
    urls = harness.read_sitemap(body.decode("utf-8"), public_base=public_base, local_base=site_url)
    return tuple(dict.fromkeys(urls + (site_url + "404.html",)))


@pytest.fixture(scope="session")
def representatives(site_urls, site_url) -> dict:
    return harness.pick_representatives(site_urls, site_url)


def _page_ref(kind: tuple[str, str | None], representatives: dict) -> harness.PageRef:
    if kind not in representatives:
        found = sorted(kind_id(k) for k in representatives)
        pytest.fail(f"the sitemap has no page of type {kind_id(kind)} (found: {', '.join(found)})", pytrace=False)
    return harness.PageRef(page_type=kind[0], lang=kind[1], url=representatives[kind])


@pytest.fixture
def representative(request, representatives) -> harness.PageRef:
    """The page of the type (and language) the test is parametrized with."""
    return _page_ref(request.param, representatives)


@pytest.fixture(scope="session")
def site_visits(chromium, site_urls) -> tuple[harness.Visit, ...]:
    """Every page loaded once in the browser; several tests judge the same loads."""
    return harness.visit_all(chromium, site_urls)


@pytest.fixture
def bilingual_page(request, representatives) -> harness.PageRef:
    """Like representative, for the page types that exist in each language."""
    return _page_ref(request.param, representatives)


def pytest_generate_tests(metafunc):
    if "representative" in metafunc.fixturenames:
        metafunc.parametrize("representative", PAGE_KINDS, ids=[kind_id(k) for k in PAGE_KINDS], indirect=True)
    if "bilingual_page" in metafunc.fixturenames:
        kinds = [k for k in PAGE_KINDS if k[1] is not None]
        metafunc.parametrize("bilingual_page", kinds, ids=[kind_id(k) for k in kinds], indirect=True)
