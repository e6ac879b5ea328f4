"""Every change to the tests: rows derived from the published runs, merged with the hand-written entries.

Decisions:
- Every published run counts, crashed or not: a crashed run did use its setup and versions.
  Unpublished runs never count.
- A derived row is dated by the first published run that used it, ordered by (date, run id).
- The list is newest first. Rows of one date: derived rows before hand-written ones; derived rows
  in the order setup, suite, scorer, report, assessment, then by their key (versions compared as
  numbers); hand-written rows by file name.
- Scorer, report and assessment versions must each be explained by exactly one hand-written
  entry (the first one too: it is what the published numbers were measured with); run setups and
  suite versions link to their run and cases instead.
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, replace
from html.parser import HTMLParser
from pathlib import PurePosixPath
from typing import Mapping

from markupsafe import Markup

from sitegen.load.entries import PLACEHOLDER_SENTENCE, PLACEHOLDER_SOURCE, assessment_key, report_key, scorer_key
from sitegen.core.errors import Diagnostic, PublicationError
from sitegen.changelog.markup import is_safe_url  # noqa: F401 - part of this module's interface for the templates
from sitegen.changelog.markup import render_markdown as _render_markdown
from sitegen.core.model import Entry, Records, Run

SETUP = "setup"
SUITE = "suite"
SCORER = "scorer"
REPORT = "report"
ASSESSMENT = "assessment"
ENTRY = "entry"
KIND_ORDER = (SETUP, SUITE, SCORER, REPORT, ASSESSMENT, ENTRY)

# The category `sitegen entry new` is told to use when an explaining entry is missing.
SUGGESTED_CATEGORY = {SCORER: "measurement-method", REPORT: "measurement-method", ASSESSMENT: "scoring-rules"}


@dataclass(frozen=True)
class ChangelogRow:
    """One change; derived rows carry structured fields for the templates to word in each language."""

    date: str
    kind: str  # setup | suite | scorer | report | assessment | entry
    anchor: str  # stable id, unique in the list
    run_id: str | None = None  # first published run that used it (derived rows)
    setup_id: str | None = None
    fingerprint: str | None = None
    suite: str | None = None
    suite_version: int | None = None
    version: int | None = None  # scorer, report or assessment version
    matching_method: str | None = None
    runner_version: int | None = None
    run_record_version: int | None = None
    policy: str | None = None
    explains: str | None = None  # explains key: what a version row needs, or what an entry claims
    explained_by: str | None = None  # version rows: anchor of the entry that explains them
    explains_anchor: str | None = None  # entry rows: anchor of the version row they explain
    category: str | None = None  # entry rows
    source: str | None = None  # entry rows: https link to the underlying record
    html: str | None = None  # entry rows: the body rendered safely (markupsafe.Markup)
    summary: str | None = None  # entry rows: the body's first sentence as plain text
    lang: str | None = None  # entry rows: the language the entry was written in


@dataclass(frozen=True)
class Changelog:
    rows: tuple[ChangelogRow, ...]  # newest first

    def row(self, anchor: str) -> ChangelogRow:
        for row in self.rows:
            if row.anchor == anchor:
                return row
        raise KeyError(anchor)


def build_changelog(records: Records) -> Changelog:
    """Derive the list from the published runs and check that every version change is explained, and only those."""
    derived = _derive_rows(records)
    problems: list[Diagnostic] = []
    entry_rows = [_entry_row(entry) for entry in sorted(records.entries, key=_entry_stem)]

    version_rows = {row.explains: row for row in derived if row.explains is not None}
    explained: dict[str, ChangelogRow] = {}
    by_entry: dict[str, str] = {}
    for entry, row in zip(sorted(records.entries, key=_entry_stem), entry_rows):
        if PLACEHOLDER_SENTENCE in entry.body or entry.source == PLACEHOLDER_SOURCE:
            problems.append(Diagnostic(
                entry.path, None, None, None,
                "the entry still holds the placeholder text or source written by `sitegen entry new`; "
                "replace it", "changelog.placeholder"))
        if entry.explains is None:
            continue
        target = version_rows.get(entry.explains)
        if target is None:
            problems.append(Diagnostic(
                entry.path, entry.explains_line, None, None,
                f"explains: {entry.explains}: no published run used that version, so there is no change "
                "to explain", "changelog.explains-nothing"))
        elif entry.explains in explained:
            problems.append(Diagnostic(
                entry.path, entry.explains_line, None, None,
                f"explains: {entry.explains}: already explained by {explained[entry.explains].anchor}",
                "changelog.explained-twice"))
        else:
            explained[entry.explains] = row
            by_entry[row.anchor] = target.anchor

    linked: list[ChangelogRow] = []
    for row in derived:
        if row.explains is None:
            linked.append(row)
        elif row.explains in explained:
            linked.append(replace(row, explained_by=explained[row.explains].anchor))
        else:
            problems.append(_unexplained(records, row))
            linked.append(row)
    linked.extend(replace(row, explains_anchor=by_entry.get(row.anchor)) for row in entry_rows)

    if problems:
        raise PublicationError(sorted(problems, key=lambda d: (d.path, d.line or 0, d.code, d.message)))
    return Changelog(rows=_order(linked))


def changed_runs(changelog: Changelog) -> Mapping[str, tuple[str, ...]]:
    """Runs that first used a new scorer or suite version, so a results page can say why numbers moved.

    The first scorer version, and the first version of each suite, replace nothing: they are left out.
    """
    found: dict[str, list[str]] = {}
    derived = sorted(
        (row for row in changelog.rows if row.kind in (SCORER, SUITE)),
        key=lambda row: (row.date, row.run_id or "", KIND_ORDER.index(row.kind), _row_key(row)),
    )
    seen_scorer = False
    seen_suites: set[str] = set()
    for row in derived:
        if row.kind == SCORER:
            first, seen_scorer = not seen_scorer, True
        else:
            first = row.suite not in seen_suites
            seen_suites.add(row.suite or "")
        if not first and row.run_id is not None:
            found.setdefault(row.run_id, []).append(row.anchor)
    return {run: tuple(anchors) for run, anchors in sorted(found.items())}


def _derive_rows(records: Records) -> list[ChangelogRow]:
    rows: dict[tuple, ChangelogRow] = {}
    for run in sorted(records.published_runs, key=lambda r: (r.date, r.id)):
        setup = records.setups.get(run.setup)
        fingerprint = setup.fingerprint if setup is not None else ""
        candidates = (
            ((SETUP, fingerprint), ChangelogRow(
                date=run.date, kind=SETUP, anchor=derived_anchor(SETUP, run, fingerprint), run_id=run.id,
                setup_id=run.setup, fingerprint=fingerprint)),
            ((SUITE, run.suite, run.suite_version), ChangelogRow(
                date=run.date, kind=SUITE, anchor=derived_anchor(SUITE, run, fingerprint),
                run_id=run.id, suite=run.suite, suite_version=run.suite_version)),
            ((SCORER, run.scorer_version), ChangelogRow(
                date=run.date, kind=SCORER, anchor=derived_anchor(SCORER, run, fingerprint), run_id=run.id,
                version=run.scorer_version, matching_method=run.matching_method,
                explains=scorer_key(run.scorer_version))),
            ((REPORT, run.report_version, run.runner_version, run.run_record_version), ChangelogRow(
                date=run.date, kind=REPORT, anchor=derived_anchor(REPORT, run, fingerprint),
                run_id=run.id, version=run.report_version, runner_version=run.runner_version,
                run_record_version=run.run_record_version,
                explains=report_key(run.report_version, run.runner_version, run.run_record_version))),
            ((ASSESSMENT, run.assessment_version, run.policy), ChangelogRow(
                date=run.date, kind=ASSESSMENT, anchor=derived_anchor(ASSESSMENT, run, fingerprint),
                run_id=run.id, version=run.assessment_version, policy=run.policy,
                explains=assessment_key(run.assessment_version, run.policy))),
        )
        for key, row in candidates:
            rows.setdefault(key, row)  # runs come in (date, id) order: the first one wins
    return list(rows.values())


def derived_anchor(kind: str, run: Run, fingerprint: str) -> str:
    """The anchor of the derived row of `kind` for what `run` used (its setup by `fingerprint`): one row per setup,
    suite version, scorer, report and assessment version, made by the first published run that used it."""
    if kind == SETUP:
        return f"setup-{fingerprint[:12]}"
    if kind == SUITE:
        return _anchor(f"suite-{run.suite}-{run.suite_version}")
    if kind == SCORER:
        return f"scorer-{run.scorer_version}"
    if kind == REPORT:
        return f"report-{run.report_version}-runner-{run.runner_version}-run-record-{run.run_record_version}"
    return _anchor(f"assessment-{run.assessment_version}-{run.policy}")


def _entry_row(entry: Entry) -> ChangelogRow:
    html = render_markdown(entry.body)
    return ChangelogRow(
        date=entry.date, kind=ENTRY, anchor=_anchor(f"entry-{_entry_stem(entry)}"), explains=entry.explains,
        category=entry.category, source=entry.source, html=html, summary=_first_sentence(html), lang="en",
    )


def _order(rows: list[ChangelogRow]) -> tuple[ChangelogRow, ...]:
    # Two stable sorts: the same-date order first, then newest date first on top of it.
    same_date = sorted(rows, key=lambda row: (KIND_ORDER.index(row.kind), _row_key(row)))
    return tuple(sorted(same_date, key=lambda row: row.date, reverse=True))


def _row_key(row: ChangelogRow) -> tuple:
    numbers = (row.version or 0, row.runner_version or 0, row.run_record_version or 0, row.suite_version or 0)
    return (row.suite or "", numbers, row.policy or "", row.fingerprint or "", row.anchor)


def _unexplained(records: Records, row: ChangelogRow) -> Diagnostic:
    what = {
        SCORER: f"scorer version {row.version} (matching method {row.matching_method})",
        REPORT: f"report version {row.version} (runner {row.runner_version}, run record {row.run_record_version})",
        ASSESSMENT: f"assessment version {row.version} under policy {row.policy}",
    }[row.kind]
    command = (f"sitegen entry new --category {SUGGESTED_CATEGORY[row.kind]} "
               f"--explains {shlex.quote(row.explains or '')}")
    path, line, pointer = _run_place(records, row.run_id or "", row.kind)
    return Diagnostic(
        path, line, None, pointer,
        f"{what}, first used by published run {row.run_id}, has no changelog entry explaining it; "
        f"create one with: {command}",
        "changelog.unexplained",
    )


def _run_place(records: Records, run_id: str, field: str) -> tuple[str, int | None, str | None]:
    """Where a run's version field stands in runs.json, when the loader kept the file's bytes."""
    source = next((f for f in records.files.values() if PurePosixPath(f.path).name == "runs.json"), None)
    if source is None:
        return "runs.json", None, None
    text = source.data.decode("utf-8", errors="replace")
    ids = list(re.finditer(r'"id"\s*:\s*"((?:[^"\\]|\\.)*)"', text))
    for index, match in enumerate(ids):
        if match.group(1) != run_id:
            continue
        end = ids[index + 1].start() if index + 1 < len(ids) else len(text)
        start = text.rfind("{", 0, match.start())
        found = re.compile(rf'"{field}"\s*:').search(text, start, end)
        offset = found.start() if found else match.start()
        return source.path, text.count("\n", 0, offset) + 1, f"/runs/{index}/{field}"
    return source.path, None, None


def _entry_stem(entry: Entry) -> str:
    return PurePosixPath(entry.path.replace("\\", "/")).stem


def _anchor(text: str) -> str:
    """An id safe in a URL fragment and an HTML id, unchanged for identifiers."""
    return re.sub(r"[^a-z0-9._-]+", "-", text.lower())


# Link targets allowed in entries; anything else with a scheme (javascript:, data:, vbscript:) is dropped.


def render_markdown(text: str) -> Markup:
    """Render an entry's Markdown: raw HTML escaped and unsafe link targets removed (see sitegen.changelog.markup)."""
    return _render_markdown(text)


class _Text(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_data(self, data: str) -> None:
        self.parts.append(data)


def _first_sentence(html: str, limit: int = 160) -> str:
    parser = _Text()
    parser.feed(html)
    parser.close()
    text = " ".join("".join(parser.parts).split())
    sentence = re.split(r"(?<=[.!?])\s", text, maxsplit=1)[0]
    return sentence if len(sentence) <= limit else sentence[: limit - 1].rstrip() + "…"


