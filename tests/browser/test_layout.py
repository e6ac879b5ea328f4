"""Each page type fits a 360 px phone without sideways scrolling; screenshots are kept as test artefacts."""

from __future__ import annotations

import pytest

from . import harness

pytestmark = pytest.mark.browser

SCREENSHOTS = harness.ROOT / "test-artifacts" / "screenshots"


@pytest.fixture(scope="module")
def tab(chromium):
    """One tab for every page and width: a fresh browser context per test costs more than the test."""
    context = chromium.new_context(device_scale_factor=1)
    yield context.new_page()
    context.close()


@pytest.mark.parametrize("width", [360, 1280])
def test_page_type_fits_the_screen(tab, representative, width):
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    shot = SCREENSHOTS / f"{representative.name}-{width}.png"
    tab.set_viewport_size({"width": width, "height": 800})
    response = tab.goto(representative.url)
    assert response is not None and response.status == 200
    tab.screenshot(path=str(shot), full_page=True)
    scroll_width, wide = harness.horizontal_overflow(tab, width)
    assert tab.locator("h1").first.is_visible(), f"{representative.url}: no visible <h1> at {width} px"
    assert shot.stat().st_size > 0
    assert scroll_width <= width + 1, (
        f"{representative.url}: scrollWidth {scroll_width} px at a {width} px viewport; "
        f"elements past the edge: {', '.join(wide)}"
    )
