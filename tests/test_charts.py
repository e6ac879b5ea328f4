"""Issue 17 item 3: the overview's charts show what happened: misses visible, states by shape and symbol, breaks labelled."""

import re
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from sitegen.build import build_site
from sitegen.core import model as m
from sitegen.render.facts import ChangeMark, _chart

RECORDS = Path(__file__).resolve().parent.parent / "records"
SVG = "{http://www.w3.org/2000/svg}"


def run(run_id: str, date: str) -> m.Run:
    return m.Run(id=run_id, date=date, setup="s", suite="x", suite_version=1, scorer_version=7, matching_method="mm",
                 report_version=1, runner_version=1, run_record_version=1, assessment_version=1, policy="p",
                 engine_version="e", repetitions=1, published=True, status=m.COMPLETED)


def result(run_id: str, passed: int, observed: int, state: str, outcome: str | None = None) -> m.RunResult:
    failed = observed - passed if state == m.BLOCK else 0
    pending = observed - passed if state == m.PENDING_CONFIRMATION else 0
    measure = m.MeasureResult("GROUNDING", state, passed, observed, failed, pending, 0)
    return m.RunResult(run_id, 7, "mm", outcome or state, (measure,), (), ())


def test_171_of_177_does_not_look_like_177_of_177():
    """The chart plots what each run did not pass, on a scale from 0 to the most any run missed."""
    runs = (run("a", "2026-01-01"), run("b", "2026-02-01"), run("c", "2026-03-01"))
    results = {"a": result("a", 177, 177, m.PASS), "b": result("b", 171, 177, m.BLOCK), "c": result("c", 176, 177, m.PENDING_CONFIRMATION)}
    chart = _chart("GROUNDING", runs, results, {})
    a, b, c = chart.bars
    assert (a.not_passed, b.not_passed, c.not_passed) == (0, 6, 1)
    assert chart.top == 6
    assert a.not_passed_height == 0 and b.not_passed_height == chart.baseline - chart.plot_top
    assert 0 < c.not_passed_height < b.not_passed_height  # a single miss in 177 shows
    assert a.centre < b.centre < c.centre


def test_a_break_is_labelled_between_the_runs_it_separates_and_the_first_run_starts_no_break():
    runs = (run("a", "2026-01-01"), run("b", "2026-02-01"), run("c", "2026-03-01"))
    results = {r.id: result(r.id, 5, 6, m.BLOCK) for r in runs}
    marks = {"a": (ChangeMark("scorer", "6", "scorer-6"),), "c": (ChangeMark("scorer", "7", "scorer-7"),)}
    chart = _chart("GROUNDING", runs, results, marks)
    (brk,) = chart.breaks
    assert brk.label == "b1" and brk.run.id == "c" and brk.marks == marks["c"]
    assert chart.bars[1].centre < brk.x < chart.bars[2].centre


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("charts") / "site"
    build_site(RECORDS, out)
    return out


def charts(site: Path, lang: str) -> list[tuple[str, str]]:
    """(figure id, figure HTML) of every chart of the overview."""
    html = (site / lang / "index.html").read_text(encoding="utf-8")
    return re.findall(r'<figure class="chart" id="([^"]+)">(.*?)</figure>', html, flags=re.S)


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_each_state_has_its_own_shape_and_symbol_in_the_chart(site, lang):
    shapes: dict[str, set] = {}
    for _, figure in charts(site, lang):
        svg = ET.fromstring(re.search(r"<svg\b.*?</svg>", figure, flags=re.S).group(0))
        for column in svg.iter(f"{SVG}g"):
            state = column.get("class").removeprefix("column state-")
            shape = next(e for e in column if e.get("class") in ("shape", "shape-line"))
            symbol = next(e for e in column if e.get("class") == "symbol").text
            # a shape's kind: its element, and for a path its number of corners (diamond 4, triangle 3)
            kind = (shape.tag, shape.get("d", "").count("L") if shape.tag == f"{SVG}path" else None)
            shapes.setdefault(state, set()).add((kind, symbol))
    assert set(shapes) == {"pass", "block", "pending-confirmation", "crashed", "not-observed"}
    assert all(len(found) == 1 for found in shapes.values()), shapes  # one shape and one symbol per state
    assert len({next(iter(found)) for found in shapes.values()}) == 5  # ... and no two states share them
    assert len({symbol for found in shapes.values() for _, symbol in found}) == 5


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_every_chart_has_a_title_a_description_a_labelled_scale_and_its_numbers_as_a_list(site, lang):
    found = charts(site, lang)
    assert len(found) == 7
    for cid, figure in found:
        svg = ET.fromstring(re.search(r"<svg\b.*?</svg>", figure, flags=re.S).group(0))
        assert svg.get("role") == "img" and svg.get("aria-labelledby") == f"{cid}-title {cid}-desc"
        assert svg.find(f"{SVG}title").get("id") == f"{cid}-title" and svg.find(f"{SVG}title").text
        assert svg.find(f"{SVG}desc").get("id") == f"{cid}-desc" and svg.find(f"{SVG}desc").text
        scale = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "scale"]
        assert len(scale) == 2 and scale[1] == "0" and int(scale[0]) >= 1
        columns = list(svg.iter(f"{SVG}g"))
        items = re.findall(r"<li>(.*?)</li>", figure.split('<ol class="chart-data">')[1].split("</ol>")[0], flags=re.S)
        assert len(items) == len(columns) == 6
        counts = [int(t.text) for t in svg.iter(f"{SVG}text") if t.get("class") == "count"]
        assert max(counts) == int(scale[0])  # the scale's top is the most any run did not pass
    grounding = dict(found)["chart-grounding"]
    of = "av" if lang == "sv" else "of"
    assert re.search(rf"171 {of} 177.*?\(6 (inte godkända|not passed)\)", grounding, flags=re.S)


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_a_scorer_change_is_a_labelled_break_explained_in_a_legend_that_links_to_the_changelog(site, lang):
    changelog_ids = set(re.findall(r'id="([^"]+)"', (site / lang / "changelog.html").read_text(encoding="utf-8")))
    for cid, figure in charts(site, lang):
        svg = ET.fromstring(re.search(r"<svg\b.*?</svg>", figure, flags=re.S).group(0))
        labels = [t.text for t in svg.iter(f"{SVG}text") if t.get("class") == "break-label"]
        assert labels == ["b1", "b2"], cid  # the bundled runs change scorer twice after the first (v5 -> v6 -> v7)
        assert len([p for p in svg.iter(f"{SVG}path") if p.get("class") == "break"]) == 2
        assert not [line for line in svg.iter(f"{SVG}line") if "dasharray" in (line.get("style") or "")]
        legend = figure.split('<dl class="breaks">')[1].split("</dl>")[0]
        for label, version in (("b1", "6"), ("b2", "7")):
            entry = legend.split(f'<dt id="{cid}-{label}">{label}</dt>')[1].split("</dd>")[0]
            anchor = re.search(r'href="[^"#]*changelog\.html#([^"]+)"', entry).group(1)
            assert anchor == f"scorer-{version}" and anchor in changelog_ids
            assert f'href="#{cid}-{label}">{label}</a>' in figure  # the run after the break carries its label in the list
