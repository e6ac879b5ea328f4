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
    # the earliest run of a scorer has nothing comparable before it: no comparison section
    first = (out / "en" / "runs" / "2026-08-18-v1-baseline.html").read_text(encoding="utf-8")
    assert 'id="comparison-heading"' not in first


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
