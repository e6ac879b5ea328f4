"""The list of every change to the tests: derived rows, explanations, order, and safe entry HTML."""

from __future__ import annotations

import dataclasses
import hashlib
from html.parser import HTMLParser

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from markupsafe import Markup

from sitegen.changelog.changes import Changelog, ChangelogRow, build_changelog, changed_runs, render_markdown
from sitegen.core.errors import PublicationError
from sitegen.core.model import Config, Entry, Records, Run, Setup, SourceFile, Suite

SOURCE = "https://github.com/example/granska-quality/pull/41"
FP_A = hashlib.sha256(b"setup a").hexdigest()
FP_B = hashlib.sha256(b"setup b").hexdigest()


def run(run_id: str, date: str, **changes) -> Run:
    fields = dict(
        id=run_id, date=date, setup="release", suite="controlled-regression", suite_version=1,
        scorer_version=6, matching_method="structured-identity/whitespace-collapsed/v6",
        report_version=5, runner_version=2, run_record_version=4, assessment_version=1,
        policy="short-case-v1", engine_version="granska 2026.09.1", repetitions=3, published=True,
        status="completed",
    )
    fields.update(changes)
    return Run(**fields)


def entry(stem: str, date: str, explains: str | None, *, category: str = "measurement-method",
          body: str = "Why it changed.\n") -> Entry:
    return Entry(path=f"records/changelog/{stem}.md", date=date, category=category, explains=explains,
                 source=SOURCE, body=body, explains_line=3 if explains else None)


BASE_ENTRIES = (
    entry("scorer-6", "2026-08-20", "scorer:6"),
    entry("report-5", "2026-08-21", "report:5/runner:2/run-record:4"),
    entry("assessment-1", "2026-08-22", "assessment:1/policy:short-case-v1", category="scoring-rules"),
)


def records(runs, entries=BASE_ENTRIES, *, files=None) -> Records:
    config = Config(title={"sv": "Motorns kvalitet", "en": "Engine quality"},
                    base_url="https://quality.example.org/", languages=("sv", "en"), default_language="sv",
                    source_repository="https://github.com/example/granska-quality", answers=(), publish=(),
                    internal_fields=())
    setups = {
        "release": Setup(id="release", configuration_json='{"merge":true}', fingerprint=FP_A, merge=True),
        "nightly": Setup(id="nightly", configuration_json='{"merge":false}', fingerprint=FP_B, merge=False),
    }
    suites = (Suite("controlled-regression", 1, "Suite", ()), Suite("controlled-regression", 2, "Suite", ()))
    return Records(config=config, suites=suites, case_versions={}, pairs=(), setups=setups, runs=tuple(runs),
                   answers={}, entries=tuple(entries), files=files or {})


def derived(changelog: Changelog, kind: str) -> list[ChangelogRow]:
    return [row for row in changelog.rows if row.kind == kind]


def test_one_published_run_gives_one_row_of_each_kind_dated_and_linked():
    changelog = build_changelog(records([run("2026-09-02-release", "2026-09-02")]))

    [setup] = derived(changelog, "setup")
    assert (setup.date, setup.anchor, setup.run_id, setup.setup_id, setup.fingerprint) == (
        "2026-09-02", f"setup-{FP_A[:12]}", "2026-09-02-release", "release", FP_A)

    [suite] = derived(changelog, "suite")
    assert (suite.date, suite.anchor, suite.suite, suite.suite_version, suite.run_id) == (
        "2026-09-02", "suite-controlled-regression-1", "controlled-regression", 1, "2026-09-02-release")

    [scorer] = derived(changelog, "scorer")
    assert (scorer.date, scorer.anchor, scorer.version, scorer.matching_method, scorer.explained_by) == (
        "2026-09-02", "scorer-6", 6, "structured-identity/whitespace-collapsed/v6", "entry-scorer-6")

    [report] = derived(changelog, "report")
    assert (report.anchor, report.version, report.runner_version, report.run_record_version,
            report.explained_by) == ("report-5-runner-2-run-record-4", 5, 2, 4, "entry-report-5")

    [assessment] = derived(changelog, "assessment")
    assert (assessment.anchor, assessment.version, assessment.policy, assessment.explained_by) == (
        "assessment-1-short-case-v1", 1, "short-case-v1", "entry-assessment-1")

    entries = {row.anchor: row for row in derived(changelog, "entry")}
    assert entries["entry-scorer-6"].explains_anchor == "scorer-6"
    assert entries["entry-report-5"].explains_anchor == "report-5-runner-2-run-record-4"
    assert entries["entry-assessment-1"].explains_anchor == "assessment-1-short-case-v1"
    assert len({row.anchor for row in changelog.rows}) == len(changelog.rows) == 8


def test_a_row_is_dated_by_the_first_published_run_by_date_then_id():
    runs = [
        run("b-later", "2026-09-10"),
        run("b-first", "2026-09-01"),
        run("a-first", "2026-09-01"),  # same date, smaller id: this one is first
    ]
    changelog = build_changelog(records(runs))
    for kind in ("setup", "suite", "scorer", "report", "assessment"):
        [row] = derived(changelog, kind)
        assert (row.date, row.run_id) == ("2026-09-01", "a-first"), kind


def test_unpublished_runs_never_count():
    runs = [
        run("early-draft", "2026-08-01", published=False),
        run("release", "2026-09-02"),
        run("trial-scorer", "2026-09-05", scorer_version=7, matching_method="m/v7", setup="nightly",
            suite_version=2, published=False),
    ]
    changelog = build_changelog(records(runs))
    assert {row.run_id for row in changelog.rows if row.kind != "entry"} == {"release"}
    assert [row.version for row in derived(changelog, "scorer")] == [6]
    assert [row.fingerprint for row in derived(changelog, "setup")] == [FP_A]


def test_a_crashed_published_run_counts():
    runs = [run("crashed", "2026-09-01", status="crashed"), run("release", "2026-09-02")]
    [scorer] = derived(build_changelog(records(runs)), "scorer")
    assert scorer.run_id == "crashed"


def test_each_new_version_gets_its_own_row():
    runs = [
        run("one", "2026-09-01"),
        run("two", "2026-09-08", setup="nightly", suite_version=2, scorer_version=7, matching_method="m/v7",
            runner_version=3, run_record_version=5, assessment_version=2, policy="short-case-v2"),
    ]
    entries = BASE_ENTRIES + (
        entry("scorer-7", "2026-09-07", "scorer:7"),
        entry("report-5b", "2026-09-07", "report:5/runner:3/run-record:5"),
        entry("assessment-2", "2026-09-07", "assessment:2/policy:short-case-v2"),
    )
    changelog = build_changelog(records(runs, entries))
    assert [row.anchor for row in derived(changelog, "setup")] == [f"setup-{FP_B[:12]}", f"setup-{FP_A[:12]}"]
    assert [row.suite_version for row in derived(changelog, "suite")] == [2, 1]
    assert [(row.version, row.run_id) for row in derived(changelog, "scorer")] == [(7, "two"), (6, "one")]
    assert [row.anchor for row in derived(changelog, "report")] == [
        "report-5-runner-3-run-record-5", "report-5-runner-2-run-record-4"]
    assert changelog.row("scorer-7").explained_by == "entry-scorer-7"


def test_unexplained_version_change_fails_with_the_command_to_fix_it():
    runs = [run("one", "2026-09-01"), run("two", "2026-09-08", scorer_version=7, matching_method="m/v7")]
    with pytest.raises(PublicationError) as caught:
        build_changelog(records(runs))
    [diagnostic] = caught.value.diagnostics
    assert diagnostic.code == "changelog.unexplained"
    assert diagnostic.path == "runs.json"
    assert diagnostic.message == (
        "scorer version 7 (matching method m/v7), first used by published run two, has no changelog entry "
        "explaining it; create one with: sitegen entry new --category measurement-method --explains scorer:7"
    )


def test_every_unexplained_change_is_reported_at_once():
    with pytest.raises(PublicationError) as caught:
        build_changelog(records([run("one", "2026-09-01")], entries=()))
    messages = [d.message for d in caught.value.diagnostics]
    assert [d.code for d in caught.value.diagnostics] == ["changelog.unexplained"] * 3
    assert any(m.endswith("--category scoring-rules --explains assessment:1/policy:short-case-v1")
               for m in messages)
    assert any(m.startswith("report version 5 (runner 2, run record 4), first used by published run one")
               and m.endswith("--explains report:5/runner:2/run-record:4") for m in messages)


def test_unexplained_change_points_into_runs_json_when_its_bytes_are_known(tmp_path):
    data = (
        '{\n  "format": "sitegen.runs/1",\n  "runs": [\n'
        '    {\n      "id": "one",\n      "scorer": {"version": 6},\n      "report": {}\n    },\n'
        '    {\n      "id": "two",\n      "scorer": {"version": 7, "matching_method": "m/v7"}\n    }\n  ]\n}\n'
    ).encode()
    runs = [run("one", "2026-09-01"), run("two", "2026-09-08", scorer_version=7, matching_method="m/v7")]
    path = tmp_path / "runs.json"
    path.write_bytes(data)
    source = SourceFile(str(path), hashlib.sha256(data).hexdigest(), len(data))
    with pytest.raises(PublicationError) as caught:
        build_changelog(records(runs, files={"runs.json": source}))
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.path, diagnostic.line, diagnostic.pointer) == (str(path), 11, "/runs/1/scorer")


def test_an_entry_explaining_a_change_that_never_happened_fails():
    entries = BASE_ENTRIES + (entry("scorer-9", "2026-09-07", "scorer:9"),)
    with pytest.raises(PublicationError) as caught:
        build_changelog(records([run("one", "2026-09-01")], entries))
    [diagnostic] = caught.value.diagnostics
    assert (diagnostic.path, diagnostic.line, diagnostic.code) == (
        "records/changelog/scorer-9.md", 3, "changelog.explains-nothing")
    assert diagnostic.message == (
        "explains: scorer:9: no published run used that version, so there is no change to explain")


def test_a_version_used_only_by_an_unpublished_run_cannot_be_explained():
    runs = [run("one", "2026-09-01"), run("draft", "2026-09-03", scorer_version=7, matching_method="m/v7",
                                           published=False)]
    entries = BASE_ENTRIES + (entry("scorer-7", "2026-09-02", "scorer:7"),)
    with pytest.raises(PublicationError) as caught:
        build_changelog(records(runs, entries))
    assert [d.code for d in caught.value.diagnostics] == ["changelog.explains-nothing"]


def test_two_entries_explaining_one_change_fail():
    entries = BASE_ENTRIES + (entry("scorer-6-again", "2026-09-07", "scorer:6"),)
    with pytest.raises(PublicationError) as caught:
        build_changelog(records([run("one", "2026-09-01")], entries))
    [diagnostic] = caught.value.diagnostics
    # entries are taken in file-name order: the later file is the one reported
    assert (diagnostic.path, diagnostic.code) == ("records/changelog/scorer-6-again.md", "changelog.explained-twice")
    assert diagnostic.message == "explains: scorer:6: already explained by entry-scorer-6"


def test_an_entry_still_holding_the_placeholder_is_not_published():
    from sitegen.load.entries import PLACEHOLDER_SENTENCE

    entries = BASE_ENTRIES + (entry("new", "2026-09-07", None, body=PLACEHOLDER_SENTENCE + "\n"),)
    with pytest.raises(PublicationError) as caught:
        build_changelog(records([run("one", "2026-09-01")], entries))
    assert [(d.path, d.code) for d in caught.value.diagnostics] == [
        ("records/changelog/new.md", "changelog.placeholder")]


def test_newest_first_with_derived_rows_before_entries_on_the_same_date():
    entries = BASE_ENTRIES + (entry("same-day", "2026-09-01", None, category="publication-rules"),
                              entry("later", "2026-09-03", None, category="test-cases"))
    changelog = build_changelog(records([run("one", "2026-09-01")], entries))
    assert [row.anchor for row in changelog.rows] == [
        "entry-later",
        f"setup-{FP_A[:12]}", "suite-controlled-regression-1", "scorer-6", "report-5-runner-2-run-record-4",
        "assessment-1-short-case-v1", "entry-same-day",
        "entry-assessment-1", "entry-report-5", "entry-scorer-6",
    ]
    dates = [row.date for row in changelog.rows]
    assert dates == sorted(dates, reverse=True)


ORDER_RUNS = (
    run("r1", "2026-09-01"),
    run("r2", "2026-09-01", setup="nightly"),
    run("r3", "2026-09-08", scorer_version=7, matching_method="m/v7", suite_version=2),
    run("r4", "2026-09-08", scorer_version=5, matching_method="m/v5", runner_version=3, run_record_version=5),
    run("r5", "2026-09-09", published=False, scorer_version=8, matching_method="m/v8"),
    run("r6", "2026-09-09", status="crashed", assessment_version=2, policy="p2"),
)
ORDER_ENTRIES = BASE_ENTRIES + (
    entry("s7", "2026-09-08", "scorer:7"), entry("s5", "2026-09-08", "scorer:5"),
    entry("r535", "2026-09-01", "report:5/runner:3/run-record:5"), entry("a2", "2026-09-09", "assessment:2/policy:p2"),
    entry("note", "2026-09-08", None, category="engine-change"),
)


@settings(max_examples=60, deadline=None)
@given(st.permutations(ORDER_RUNS), st.permutations(ORDER_ENTRIES))
def test_order_does_not_depend_on_input_order(runs, entries):
    expected = build_changelog(records(ORDER_RUNS, ORDER_ENTRIES))
    assert build_changelog(records(runs, entries)) == expected


def test_changed_runs_names_the_runs_that_first_used_a_new_scorer_or_suite_version():
    changelog = build_changelog(records(ORDER_RUNS, ORDER_ENTRIES))
    # r1 used the first scorer and suite versions: nothing before them changed.
    # r3 and r4 are the first with scorer 7 and scorer 5 and r3 also with suite version 2.
    assert dict(changed_runs(changelog)) == {
        "r3": ("suite-controlled-regression-2", "scorer-7"),
        "r4": ("scorer-5",),
    }


def test_entry_rows_carry_safe_html_and_a_plain_summary():
    body = "The scorer **changed**. It now accepts <b>wider</b> quotes.\n"
    entries = BASE_ENTRIES + (entry("note", "2026-09-01", None, body=body),)
    row = build_changelog(records([run("one", "2026-09-01")], entries)).row("entry-note")
    assert isinstance(row.html, Markup)
    assert "<strong>changed</strong>" in row.html
    assert "&lt;b&gt;wider&lt;/b&gt;" in row.html
    assert row.summary == "The scorer changed."
    assert (row.category, row.source, row.lang, row.date) == ("measurement-method", SOURCE, "en", "2026-09-01")


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append((tag, dict(attrs)))


def tags(html: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


@pytest.mark.parametrize("text", [
    "<script>alert(1)</script>",
    "<img src=x onerror=alert(1)>",
    "<div onclick='alert(1)'>block</div>\n",
    "a <span style='x'>inline</span> tag",
    "<!-- comment --> and <iframe src='https://a.b/'></iframe>",
])
def test_raw_html_is_escaped_not_passed_through(text):
    html = render_markdown(text)
    assert {tag for tag, _ in tags(html)} <= {"p"}
    assert "&lt;" in html


@pytest.mark.parametrize("target", [
    "javascript:alert(1)",
    "JavaScript:alert(1)",
    "&#106;avascript:alert(1)",
    "java&#x09;script:alert(1)",
    "data:text/html;base64,PHNjcmlwdD4=",
    "vbscript:msgbox(1)",
])
def test_unsafe_link_targets_are_removed(target):
    html = render_markdown(f"[x]({target}) and [y][ref] and ![z]({target})\n\n[ref]: {target}\n")
    found = tags(html)
    assert [tag for tag, _ in found] == ["p", "a", "a", "a"], "the image is a link like the others, which fetches nothing"
    assert all("href" not in attrs and "src" not in attrs for _, attrs in found)


@pytest.mark.parametrize("target", ["https://github.com/example/x/pull/1", "../en/method.html#grounding",
                                    "#scorer-6", "mailto:quality@example.org"])
def test_safe_link_targets_are_kept(target):
    [(_, _), (tag, attrs)] = tags(render_markdown(f"[x]({target})"))
    assert (tag, attrs["href"]) == ("a", target)


def test_rows_are_frozen():
    row = build_changelog(records([run("one", "2026-09-01")])).rows[0]
    with pytest.raises(dataclasses.FrozenInstanceError):
        row.date = "2000-01-01"  # type: ignore[misc]
