"""`sitegen compare`: observation by observation, regressions first, and never across runs measured differently."""

import json
import re
from pathlib import Path

import pytest

from sitegen.core import model as m
from sitegen.cli import main
from sitegen.score.comparison import IncompatibleRunsError, compare_runs
from sitegen.load.records import load_records
from sitegen.score.scoring import score_run
from sitegen.score.verify import PassRequest, score_pass
from sitegen.score.measures.registry import MEASURES

RECORDS = Path(__file__).resolve().parent.parent / "records"
NIGHTLY, RELEASE, BASELINE, CRASHED = "2026-09-02-nightly", "2026-09-16-release", "2026-08-18-v1-baseline", "2026-10-08-nightly"


@pytest.fixture(scope="module")
def records() -> m.Records:
    return load_records(RECORDS)


@pytest.fixture(scope="module")
def comparison(records):
    return compare_runs(records, NIGHTLY, RELEASE)


def compare(capsys, *argv):
    code = main(["compare", "--records", str(RECORDS), *argv])
    out, err = capsys.readouterr()
    return code, out, err


def _measure(result: m.RunResult, name: str) -> m.MeasureResult:
    return next(x for x in result.measures if x.measure == name)


def test_grounding_improved_overall_yet_has_a_regression(records, comparison):
    before, after = _measure(score_run(records, NIGHTLY), "GROUNDING"), _measure(score_run(records, RELEASE), "GROUNDING")
    assert (before.passed, before.observed) == (171, 177) and (after.passed, after.observed) == (172, 177)
    (delta,) = [d for d in comparison.measures if d.measure == "GROUNDING"]
    assert delta.before == (before.passed, before.observed) and delta.after == (after.passed, after.observed)
    assert delta.after[0] > delta.before[0] and delta.after[1] == delta.before[1], "the count improved"
    regressions = [c for c in comparison.changes if c.measure == "GROUNDING" and c.regression]
    assert regressions, "an improved count still hides an observation that got worse"
    failed_after = {(o.case_version, o.repetition, o.stage, o.subject) for o in score_run(records, RELEASE).observations
                    if o.measure == "GROUNDING" and o.result in (m.FAILED, m.PENDING)}
    bad_before = {(o.case_version, o.repetition, o.stage, o.subject) for o in score_run(records, NIGHTLY).observations
                  if o.measure == "GROUNDING" and o.result in (m.FAILED, m.PENDING)}
    for change in regressions:
        key = (change.case_version, change.repetition, change.stage, change.subject)
        assert key in failed_after and key not in bad_before
        assert change.before in (m.PASSED, m.DISMISSED) and change.after in (m.FAILED, m.PENDING)


def test_every_count_agrees_with_the_scored_runs(records, comparison):
    a, b = score_run(records, NIGHTLY), score_run(records, RELEASE)
    for delta in comparison.measures:
        for counts, result in ((delta.before, a), (delta.after, b)):
            x = _measure(result, delta.measure)
            assert counts == ((x.passed, x.observed) if x.observed else None)


def test_regressions_are_listed_first(comparison, capsys):
    flags = [c.regression for c in comparison.changes]
    assert True in flags and False in flags
    assert flags == sorted(flags, reverse=True)
    code, out, _ = compare(capsys, NIGHTLY, RELEASE)
    assert code == 0
    tags = [line.split()[0] for line in out.splitlines() if re.match(r"^\s+(REGRESSION|change)\s", line)]
    assert tags == sorted(tags, key=lambda t: t != "REGRESSION") and "REGRESSION" in tags and "change" in tags
    summary = re.search(r"^(\d+) regression\(s\), (\d+) other change\(s\)$", out, flags=re.M)
    assert summary and int(summary.group(1)) == tags.count("REGRESSION") and int(summary.group(2)) == tags.count("change")


def test_json_has_the_same_content_as_the_text(capsys):
    code, text, _ = compare(capsys, NIGHTLY, RELEASE)
    assert code == 0
    code, raw, err = compare(capsys, NIGHTLY, RELEASE, "--format", "json")
    assert code == 0 and err == ""
    data = json.loads(raw)
    assert data["runs"] == [NIGHTLY, RELEASE]
    assert data["setup_changed"] is True

    shown = {}
    for line in text.splitlines():
        found = re.match(r"^\s+([A-Z_]+)\s+(not observed|\d+ of \d+)\s+->\s+(not observed|\d+ of \d+)$", line)
        if found:
            shown[found.group(1)] = (found.group(2), found.group(3))
    assert [x["measure"] for x in data["measures"]] == list(MEASURES) == list(shown)
    for x in data["measures"]:
        as_text = tuple("not observed" if v is None else f"{v[0]} of {v[1]}" for v in (x["before"], x["after"]))
        assert shown[x["measure"]] == as_text

    lines = [line.strip() for line in text.splitlines() if re.match(r"^\s+(REGRESSION|change)\s", line)]
    assert len(lines) == len(data["changes"])
    for line, change in zip(lines, data["changes"]):
        tag = "REGRESSION" if change["regression"] else "change"
        assert line.startswith(tag)
        where = f"{change['stage']} {change['subject']}" if change["stage"] else f"pair {change['subject']}"
        assert (f"{change['measure']} {change['case_version']} repetition {change['repetition']} {where}: "
                f"{change['before']} -> {change['after']}") in line
    assert [c["stage"] for c in data["changes"] if c["measure"] == "INVARIANT_PAIRS"] == [None]


def test_an_invariance_pair_is_compared_by_pair_and_repetition_not_by_the_stage_of_its_first_difference(records, capsys):
    """A pair observation compares every stage and the merge; the results record gives a passed one the run's last stage
    and a failed one its first difference's. Compared by that stage, the pair licence-gender that passed in the nightly
    and failed in the release was two changes, "passed -> not observed" and a regression "not observed -> failed";
    it is one regression, passed to failed, and back to passed in the next comparable run one change."""
    (change,) = [c for c in compare_runs(records, NIGHTLY, RELEASE).changes if c.measure == "INVARIANT_PAIRS"]
    assert (change.case_version, change.repetition, change.stage, change.subject) == ("licence-gender-flawed-feminine", "2", "", "licence-gender")
    assert (change.before, change.after, change.regression) == (m.PASSED, m.FAILED, True)
    (back,) = [c for c in compare_runs(records, RELEASE, "2026-10-01-engine-change").changes if c.measure == "INVARIANT_PAIRS"]
    assert (back.before, back.after, back.regression) == (m.FAILED, m.PASSED, False)
    code, out, _ = compare(capsys, NIGHTLY, RELEASE)
    assert code == 0
    assert "  REGRESSION INVARIANT_PAIRS licence-gender-flawed-feminine repetition 2 pair licence-gender: passed -> failed\n" in out


def test_incompatible_runs_exit_2_naming_each_difference(capsys, records):
    code, out, err = compare(capsys, BASELINE, RELEASE)
    assert code == 2 and out == "" and "Traceback" not in err
    a, b = records.run(BASELINE), records.run(RELEASE)
    assert a.scorer_version != b.scorer_version and a.matching_method != b.matching_method
    lines = err.splitlines()
    assert BASELINE in lines[0] and RELEASE in lines[0]

    def line_about(word):
        (found,) = [line for line in lines if line.strip().startswith(f"- {word}")]
        return found

    assert f"{a.scorer_version}" in line_about("scorer version") and f"{b.scorer_version}" in line_about("scorer version")
    assert a.matching_method in line_about("matching method") and b.matching_method in line_about("matching method")
    stages = line_about("stages")
    assert f"{len(records.stages(a))} (" in stages and f"{len(records.stages(b))} (" in stages
    with pytest.raises(IncompatibleRunsError) as caught:
        compare_runs(records, BASELINE, RELEASE)
    assert len(caught.value.differences) == 3


def test_a_different_setup_is_allowed_and_shown_before_anything_else(capsys, records):
    a, b = records.run(NIGHTLY), records.run(RELEASE)
    assert records.setups[a.setup].fingerprint != records.setups[b.setup].fingerprint
    code, out, _ = compare(capsys, NIGHTLY, RELEASE)
    assert code == 0
    head = out.splitlines()[:2]
    (line,) = [h for h in head if a.setup in h and b.setup in h]
    assert records.setups[a.setup].fingerprint[:12] in line and records.setups[b.setup].fingerprint[:12] in line
    assert line.startswith("!!"), "a changed setup stands out"


def test_a_crashed_run_is_refused(capsys):
    for argv in ((RELEASE, CRASHED), (CRASHED, RELEASE)):
        code, out, err = compare(capsys, *argv)
        assert code == 2 and out == "" and "Traceback" not in err
        assert CRASHED in err and "crashed" in err.lower()


def test_an_unknown_run_is_a_usage_error(capsys):
    code, _, err = compare(capsys, RELEASE, "2099-01-01-nothing")
    assert code == 2 and "2099-01-01-nothing" in err and "Traceback" not in err


def test_site_compares_each_run_with_the_previous_comparable_one(records):
    found = score_pass(PassRequest(records, None, compare=True), records.published_runs).comparisons
    # the v1 baseline has no earlier run; nightly's only predecessor was scored with another scorer and has one stage
    assert "2026-08-18-v1-baseline" not in found and "2026-09-02-nightly" not in found
    assert found["2026-09-16-release"].run_a == "2026-09-02-nightly"
    assert found["2026-10-01-engine-change"].run_a == "2026-09-16-release"
    assert "2026-10-08-nightly" not in found  # crashed: nothing to compare
    release = found["2026-09-16-release"]
    assert release.regressions == compare_runs(records, "2026-09-02-nightly", "2026-09-16-release").regressions


def test_keeping_only_regressions_gives_exactly_the_regressions_of_the_whole_comparison(records, tmp_path):
    """The build asks for regressions only, and the other changes are then never built; the regressions are the same."""
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "benchmarks"))
    try:
        import generate
    finally:
        sys.path.pop(0)
    synthetic = tmp_path / "records"
    assert generate.main([str(synthetic), "--case-versions", "30", "--runs", "4", "--repetitions", "2"]) == 0
    for corpus in (records, load_records(synthetic)):
        request = PassRequest(corpus, None, compare=True)
        whole = score_pass(request, corpus.published_runs).comparisons
        only = score_pass(request, corpus.published_runs, keep_all_changes=False).comparisons
        assert set(only) == set(whole) and whole
        for run_id, comparison in whole.items():
            assert only[run_id] == comparison.regressions_only()
            assert only[run_id].measures == comparison.measures
        assert any(c.regressions for c in only.values())
        assert any(len(c.changes) > len(c.regressions) for c in whole.values()), "other changes exist and were left out"


def test_run_page_lists_the_regressions_with_links_to_the_cases(tmp_path):
    from html.parser import HTMLParser

    out = tmp_path / "site"
    assert main(["build", "--records", str(RECORDS), "--out", str(out), "--quiet"]) == 0
    page = (out / "en" / "runs" / "2026-09-16-release.html").read_text(encoding="utf-8")
    assert 'id="comparison-heading"' in page and 'id="regressions"' in page
    section = page[page.index('id="regressions"'):]

    class Links(HTMLParser):
        def __init__(self):
            super().__init__()
            self.hrefs = []

        def handle_starttag(self, tag, attrs):
            if tag == "a":
                self.hrefs.append(dict(attrs)["href"])

    parser = Links()
    parser.feed(section.split("</section>")[0])
    assert "../cases/cu/cure-unchecked/2026-09-16-release.html#r2-reviewer" in parser.hrefs
    for href in parser.hrefs:
        target = (out / "en" / "runs" / href.split("#")[0]).resolve()
        assert target.is_file(), href
    # the first published run has nothing before it: no counts compared, no regressions listed
    first = (out / "en" / "runs" / "2026-08-18-v1-baseline.html").read_text(encoding="utf-8")
    assert 'id="comparison-caption"' not in first and 'id="regressions"' not in first


def test_what_else_differs_between_comparable_runs_is_said_next_to_the_counts(records, capsys):
    """Runs are compared only when compatible; a report or engine version that differs is allowed, but the reader is told."""
    from dataclasses import replace

    from sitegen.score.comparison import allowed_differences, incompatibilities

    a = records.run(NIGHTLY)
    b = replace(a, id="b", report_version=a.report_version + 1, engine_version=a.engine_version + "-next")
    assert incompatibilities(records, a, b) == ()
    assert [d.text() for d in allowed_differences(a, b)] == [
        f"report: version {a.report_version} (runner {a.runner_version}, run record {a.run_record_version}) vs version "
        f"{a.report_version + 1} (runner {a.runner_version}, run record {a.run_record_version})",
        f"engine: {a.engine_version} vs {a.engine_version}-next",
    ]
    assert allowed_differences(a, a) == ()

    pairs = [(x, y) for x in records.published_runs for y in records.published_runs
             if x.date < y.date and not incompatibilities(records, x, y) and allowed_differences(x, y)]
    assert pairs, "the bundled runs include a comparable pair with another report or engine version"
    x, y = pairs[0]
    code, text, _ = compare(capsys, x.id, y.id)
    assert code == 0
    for note in allowed_differences(x, y):
        assert f"note: {note.text()}" in text.splitlines()
    code, raw, _ = compare(capsys, x.id, y.id, "--format", "json")
    assert json.loads(raw)["other_differences"] == [
        {"what": d.what, "before": list(d.before) if isinstance(d.before, tuple) else d.before,
         "after": list(d.after) if isinstance(d.after, tuple) else d.after} for d in allowed_differences(x, y)]


# --- what a run page says of the comparison, in both languages ---------------------------------------------------------

SCORER_7, ENGINE_CHANGE = "2026-12-01-scorer-7", "2026-10-01-engine-change"
WORDS = {
    "en": {"none": "No earlier run can be compared with this one: counts are compared only between runs of the same suite "
                   "version with the same scorer, matching method, assessment and stages.",
           "latest": "The latest earlier run with counts, {link}, was measured differently:",
           "scorer": "scorer version {before} → {after}", "method": "matching method <code>{before}</code> → <code>{after}</code>",
           "engine": "engine version <code>{before}</code> → <code>{after}</code>",
           "also": "Also different, without making the counts incomparable:",
           "comparable": "Run {run} measured the same suite version with the same scorer, matching method, assessment and stages",
           "setup": "run setup {before} (<code class=\"hash\">{before_print}</code>) → {after} (<code class=\"hash\">{after_print}</code>): "
                    "the engine was configured differently, which is part of what is measured, not of how it is measured",
           "old setup": "The run setup changed",
           "stages": "stages scored: {before} → {after}; the run setup decides whether a run goes through the merge",
           "first": "This is the first published run: there is no earlier run to compare it with.",
           "crashed": "This run did not finish, so it has no counts to compare with an earlier run's.",
           "changelog": "changelog",
           "heading": "Compared with the previous comparable run", "heading none": "Compared with earlier runs"},
    "sv": {"none": "Ingen tidigare körning kan jämföras med den här: antal jämförs bara mellan körningar av samma version av "
                   "testsviten med samma poängsättning, matchningsmetod, bedömning och steg.",
           "latest": "Den senaste tidigare körningen med antal, {link}, mättes på ett annat sätt:",
           "scorer": "poängsättning version {before} → {after}", "method": "matchningsmetod <code>{before}</code> → <code>{after}</code>",
           "engine": "motorversion <code>{before}</code> → <code>{after}</code>",
           "also": "Det här skiljer sig också, utan att göra antalen ojämförbara:",
           "comparable": "Körningen {run} mätte samma version av testsviten med samma poängsättning, matchningsmetod, bedömning och steg",
           "setup": "körningsupplägg {before} (<code class=\"hash\">{before_print}</code>) → {after} (<code class=\"hash\">{after_print}</code>): "
                    "motorn var konfigurerad på ett annat sätt, vilket hör till det som mäts, inte till hur det mäts",
           "old setup": "Körningsupplägget ändrades",
           "stages": "steg som poängsattes: {before} → {after}; körningsupplägget avgör om en körning går igenom sammanslagningen",
           "first": "Det här är den första publicerade körningen: det finns ingen tidigare körning att jämföra den med.",
           "crashed": "Körningen blev inte klar, så den har inga antal att jämföra med en tidigare körnings.",
           "changelog": "ändringsloggen",
           "heading": "Jämfört med föregående jämförbara körning", "heading none": "Jämfört med tidigare körningar"},
}


@pytest.fixture(scope="module")
def bundled_site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("compared") / "site"
    assert main(["build", "--records", str(RECORDS), "--out", str(out), "--quiet"]) == 0
    return out


def comparison_section(site: Path, lang: str, run_id: str) -> str:
    page = (site / lang / "runs" / f"{run_id}.html").read_text(encoding="utf-8")
    assert page.count('id="comparison-heading"') == 1, f"{lang}/{run_id}: one comparison section, always"
    section = page[page.index('id="comparison-heading"'):]
    return section[: section.index("</section>")]


def lists(section: str) -> list[list[str]]:
    """The section's lists of differences, each as its items' inner HTML."""
    found = []
    for chunk in section.split('<ul class="differences">')[1:]:
        found.append(re.findall(r"<li>(.*?)</li>", chunk[: chunk.index("</ul>")], flags=re.S))
    return found


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_the_first_run_of_a_new_scorer_says_why_no_earlier_run_is_comparable(records, bundled_site, lang):
    """Before, the page of the first run measured with scorer 7 had no comparison section and no word on why."""
    words, run = WORDS[lang], records.run(SCORER_7)
    # the latest earlier published run is a crashed one (no counts); the latest with counts is the engine change
    between = [r for r in records.published_runs if ENGINE_CHANGE < r.id < SCORER_7]
    assert [r.status for r in between] == [m.CRASHED]
    earlier = records.run(ENGINE_CHANGE)
    section = comparison_section(bundled_site, lang, SCORER_7)
    link = f'<a href="../runs/{ENGINE_CHANGE}.html">{ENGINE_CHANGE}</a>'
    assert words["none"] in section and words["latest"].format(link=link) in section
    # nothing is compared here, so the heading does not promise a comparable run
    assert words["heading none"] in section and words["heading"] not in section
    assert 'id="comparison-caption"' not in section, "no counts are set side by side"
    incomparable, also = lists(section)
    scorer = words["scorer"].format(before=earlier.scorer_version, after=run.scorer_version)
    (scorer_item,) = [item for item in incomparable if item.startswith(scorer)]
    method = words["method"].format(before=earlier.matching_method, after=run.matching_method)
    (method_item,) = [item for item in incomparable if item.startswith(method)]
    # the scorer's change links to the changelog row that says what scorer 7 is
    (target,) = re.findall(rf'\(<a href="\.\./changelog\.html#([^"]+)">{words["changelog"]}</a>\)', scorer_item)
    changelog = (bundled_site / lang / "changelog.html").read_text(encoding="utf-8")
    row = changelog[changelog.index(f'<tr id="{target}">'):]
    row = row[: row.index("</tr>")]
    assert f" {run.scorer_version} " in row and run.matching_method in row
    # the matching method changed with the scorer, whose row names it: it links to that row too
    assert method_item == f'{method} (<a href="../changelog.html#{target}">{words["changelog"]}</a>)'
    # the engine changed too, and is said to leave the counts comparable
    engine = words["engine"].format(before=earlier.engine_version, after=run.engine_version)
    assert engine not in incomparable and engine in also
    assert section.index(words["also"]) < section.index(engine)


# inside a sentence a stage is named in lower case, not by its heading word (test_stage_words.py)
def test_a_matching_method_that_changed_without_its_scorer_links_to_no_changelog_row(records):
    """A matching method has no changelog row of its own: one that changed with the scorer links to the scorer's row,
    which names it; one that changed alone (the records tie a method to its scorer version, the page does not rely on
    it) links nowhere rather than to a row that says nothing of it."""
    from dataclasses import replace

    from sitegen.changelog.changes import build_changelog
    from sitegen.render.facts import uncompared_runs

    earlier, run = records.run(ENGINE_CHANGE), records.run(SCORER_7)
    alone = replace(run, scorer_version=earlier.scorer_version)
    changelog = build_changelog(records)  # with a row for each scorer, the earlier one's too
    for runs, linked in ((records.runs, {"scorer": f"scorer-{run.scorer_version}",
                                         "matching_method": f"scorer-{run.scorer_version}"}),
                         (tuple(alone if r.id == run.id else r for r in records.runs), {"matching_method": None})):
        changed = replace(records, runs=runs)
        outcomes = {r.id: m.CRASHED_STATE if r.status == m.CRASHED else "PASS" for r in changed.published_runs}
        uncompared = uncompared_runs(changed, outcomes, {}, changelog)
        assert {d.what: anchor for d, anchor in uncompared[SCORER_7].differences} == linked


STAGE_NAMES = {"en": {"reviewer": "reviewers", "report": "delivered report"},
               "sv": {"reviewer": "granskare", "report": "levererad rapport"}}


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_a_setup_that_changed_the_stages_is_not_called_harmless(records, bundled_site, lang):
    """The v1 baseline ran without the merge, the nightly after it with: the stages keep their counts apart, and the
    setup that decided so is not listed among what leaves counts comparable."""
    words, run, earlier = WORDS[lang], records.run(NIGHTLY), records.run(BASELINE)
    assert records.setups[earlier.setup].merge != records.setups[run.setup].merge
    section = comparison_section(bundled_site, lang, NIGHTLY)
    incomparable, also = lists(section)
    names = STAGE_NAMES[lang]
    stages = words["stages"].format(before=", ".join(names[s] for s in records.stages(earlier)),
                                    after=", ".join(names[s] for s in records.stages(run)))
    (item,) = [i for i in incomparable if i.startswith(stages)]
    (target,) = re.findall(r'href="\.\./changelog\.html#([^"]+)"', item)
    changelog = (bundled_site / lang / "changelog.html").read_text(encoding="utf-8")
    row = changelog[changelog.index(f'<tr id="{target}">'):]
    assert run.setup in row[: row.index("</tr>")], "the link leads to the row of the setup that goes through the merge"
    assert not any(run.setup in i for i in also)
    assert words["engine"].format(before=earlier.engine_version, after=run.engine_version) in also


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_the_first_run_and_a_crashed_run_say_why_they_are_compared_with_none(records, bundled_site, lang):
    first = min(records.published_runs, key=lambda r: (r.date, r.id))
    (crashed,) = [r for r in records.published_runs if r.status == m.CRASHED]
    for run, said in ((first, WORDS[lang]["first"]), (crashed, WORDS[lang]["crashed"])):
        section = comparison_section(bundled_site, lang, run.id)
        assert f"<p>{said}</p>" in section
        assert 'id="comparison-caption"' not in section and "<ul" not in section


@pytest.mark.parametrize("lang", ["en", "sv"])
@pytest.mark.parametrize("before,after", [(NIGHTLY, RELEASE), (RELEASE, ENGINE_CHANGE)])
def test_a_changed_setup_is_listed_among_the_differences_that_leave_counts_comparable(records, bundled_site, lang, before, after):
    """Before, "comparable" and "The run setup changed:" stood side by side; the setup is now one of the differences that
    do not make the counts incomparable, said to be part of what is measured (the engine's configuration)."""
    words = WORDS[lang]
    a, b = records.run(before), records.run(after)
    setup_a, setup_b = records.setups[a.setup], records.setups[b.setup]
    assert setup_a.fingerprint != setup_b.fingerprint
    section = comparison_section(bundled_site, lang, after)
    # the earlier run is linked where the sentence names it, and only there
    link = f'<a href="../runs/{before}.html">{before}</a>'
    assert words["comparable"].format(run=link) in section
    assert section.count(f'href="../runs/{before}.html"') == 1
    assert words["heading"] in section and words["heading none"] not in section
    assert words["old setup"] not in section
    (also,) = lists(section)
    assert also[0] == words["setup"].format(before=a.setup, before_print=setup_a.fingerprint[:12], after=b.setup,
                                             after_print=setup_b.fingerprint[:12])
    assert words["engine"].format(before=a.engine_version, after=b.engine_version) in also
    assert section.index(words["comparable"].format(run=link)) < section.index(words["also"]) < section.index(also[0])


def test_the_site_and_sitegen_compare_decide_comparability_by_the_same_rule(records):
    """The site's pass groups runs by compatibility_key, `sitegen compare` and the pages name measured_differently: the
    two agree for every pair of runs, and each thing METHOD.md names (suite version, scorer, matching method, assessment,
    stages) keeps counts apart on its own, while a setup, engine, report or repetitions change does not."""
    from dataclasses import replace

    from sitegen.score.comparison import compatibility_key, measured_differently

    base = records.run(NIGHTLY)
    other_setup = next(s for s in records.setups.values() if s.merge != records.setups[base.setup].merge)
    variants = {
        "suite": replace(base, suite_version=base.suite_version + 1),
        "scorer": replace(base, scorer_version=base.scorer_version + 1),
        "matching_method": replace(base, matching_method=base.matching_method + "-other"),
        "assessment": replace(base, policy=base.policy + "-other"),
        "stages": replace(base, setup=other_setup.id),
    }
    for what, variant in variants.items():
        assert [d.what for d in measured_differently(records, base, variant)] == [what]
    alike = replace(base, setup=records.run(RELEASE).setup, engine_version="x", report_version=99, repetitions=7)
    assert measured_differently(records, base, alike) == ()
    runs = (*records.runs, *variants.values(), alike)
    for a in runs:
        for b in runs:
            same = compatibility_key(records, a) == compatibility_key(records, b)
            assert same == (measured_differently(records, a, b) == ()), (a.id, b.id)
