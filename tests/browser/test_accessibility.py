"""axe-core finds no WCAG 2 A or AA violation on any page type, in either language."""

from __future__ import annotations

import pytest

from . import harness

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def tab(chromium):
    """A tab whose context bypasses the pages' CSP, which forbids scripts and so would block axe."""
    context = chromium.new_context(bypass_csp=True)
    yield context.new_page()
    context.close()


def test_page_type_has_no_wcag_violation(tab, axe_script, representative):
    response = tab.goto(representative.url)
    assert response is not None and response.status == 200
    violations = harness.run_axe(tab, axe_script)
    assert not violations, f"{representative.url}:\n" + harness.describe_violations(violations)
