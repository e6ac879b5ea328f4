"""Every published page loads cleanly, stays on its own host, and links only to what exists."""

from __future__ import annotations

import pytest

from . import harness

pytestmark = pytest.mark.browser


def test_every_page_loads_without_errors(site_visits):
    problems = [
        f"{v.url}: {p}" for v in site_visits for p in v.problems if not p.startswith("request to another host")
    ]
    assert not problems, f"{len(problems)} problem(s):\n" + "\n".join(problems)


def test_no_page_requests_another_host(site_visits):
    foreign = [f"{v.url}: {r}" for v in site_visits for r in v.foreign_requests]
    assert not foreign, "requests to other hosts (aborted):\n" + "\n".join(foreign)


def test_no_internal_link_is_broken(site_visits, public_base, site_url):
    broken = harness.broken_links(site_visits, public_base=public_base, local_base=site_url)
    assert not broken, f"{len(broken)} broken link(s):\n" + "\n".join(broken)


def test_each_language_page_declares_its_language(site_visits, site_url):
    wrong = []
    for v in site_visits:
        kind = harness.classify(harness.site_path(v.url, site_url))
        if kind and kind[1] and v.html_lang != kind[1]:
            wrong.append(f"{v.url}: <html lang={v.html_lang!r}>, expected {kind[1]!r}")
    assert not wrong, "\n".join(wrong)
