"""Long lists on a run page show their first items and continue on pages that together hold every item once."""

import re
from html.parser import HTMLParser
from pathlib import Path

import pytest

from sitegen.render import views
from sitegen.build import build_site
from sitegen.load.records import load_records
from sitegen.score.results import read_results

RECORDS = Path(__file__).resolve().parent.parent / "records"
RUN = "2026-09-16-release"


class Anchors(HTMLParser):
    def __init__(self):
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.items = 0

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if tag == "a" and "href" in attrs:
            self.hrefs.append(attrs["href"])
        if "id" in attrs:
            self.ids.add(attrs["id"])


def parse(path: Path) -> Anchors:
    parser = Anchors()
    parser.feed(path.read_text(encoding="utf-8"))
    return parser


@pytest.fixture(scope="module")
def small_pages_site(tmp_path_factory):
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(views, "RUN_PAGE_ITEMS", 2)
        patch.setattr(views, "GRID_PAGE_ROWS", 2)
        patch.setattr(views, "LIST_PAGE_ITEMS", 3)
        out = tmp_path_factory.mktemp("listing") / "site"
        build_site(RECORDS, out)
    return out


def test_run_page_shows_the_first_items_and_links_every_continuation_page(small_pages_site):
    run_page = small_pages_site / "en" / "runs" / f"{RUN}.html"
    html = run_page.read_text(encoding="utf-8")
    stability = html[html.index('id="obs-identical_input_stability"'):]
    stability = re.sub(r'<ul class="reason-differences">.*?</ul>', "", stability, flags=re.S)  # each reason's own list
    stability = stability[: stability.index("</ul>")]
    assert stability.count("<li>") == 2
    result = read_results(load_records(RECORDS).results_json)[RUN]
    total = sum(1 for o in result.observations if o.measure == "IDENTICAL_INPUT_STABILITY")
    expected_pages = -(-total // 3)
    links = [h for h in parse(run_page).hrefs if "observations-identical-input-stability-" in h]
    assert len(links) == expected_pages


def test_continuation_pages_hold_every_observation_exactly_once(small_pages_site):
    result = read_results(load_records(RECORDS).results_json)[RUN]
    folder = small_pages_site / "sv" / "runs" / RUN
    for measure in {o.measure for o in result.observations}:
        wanted = [o for o in result.observations if o.measure == measure]
        name = measure.lower().replace("_", "-")
        files = sorted(folder.glob(f"observations-{name}-*.html"), key=lambda p: int(p.stem.rsplit("-", 1)[1]))
        if len(wanted) <= 2:
            assert not files
            continue
        seen = 0
        for file in files:
            text = file.read_text(encoding="utf-8")
            body = text[text.index('<ul class="observations">'):]
            body = re.sub(r'<ul class="reason-differences">.*?</ul>', "", body, flags=re.S)  # each reason's own list
            seen += body[: body.index("</ul>")].count("<li>")
        assert seen == len(wanted), measure


def test_every_link_on_continuation_pages_resolves(small_pages_site):
    checked = 0
    for page in (small_pages_site / "en" / "runs" / RUN).glob("*.html"):
        for href in parse(page).hrefs:
            if href.startswith("https://"):
                continue  # the footer's source link
            target, _, anchor = href.partition("#")
            path = (page.parent / target).resolve() if target else page
            assert path.is_file(), f"{page.name}: {href}"
            if anchor:
                assert anchor in parse(path).ids, f"{page.name}: {href}"
            checked += 1
    assert checked > 20
    grid_pages = sorted((small_pages_site / "en" / "runs" / RUN).glob("grid-*.html"))
    assert len(grid_pages) == -(-25 // 3)  # 25 case versions, 3 rows a page
    assert re.search(r"<html lang=\"en\">", grid_pages[0].read_text(encoding="utf-8"))


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_the_sentence_before_the_continuation_links_ends_in_a_colon_and_a_space(small_pages_site, lang):
    html = (small_pages_site / lang / "runs" / f"{RUN}.html").read_text(encoding="utf-8")
    more = re.findall(r'<p class="more">(.*?)</p>', html, flags=re.DOTALL)
    assert more
    for paragraph in more:
        sentence, _, links = paragraph.partition("<a ")
        assert sentence.endswith(": ") and links, paragraph
