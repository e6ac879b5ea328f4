"""What the overview and the run pages say about every published run: views, outcomes and the charts per measure."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Mapping

from sitegen.changelog.changes import Changelog, changed_runs
from sitegen.core.model import CRASHED_STATE, Records, Run, RunResult
from sitegen.score.measures.registry import MEASURES


@dataclass(frozen=True)
class ChangeMark:
    kind: str  # scorer | suite
    value: str
    anchor: str


@dataclass(frozen=True)
class RunView:
    run: Run
    result: RunResult | None  # on the overview, its headline only (see headline); the run page gets the whole result
    fingerprint: str
    merge: bool
    older_scorer: bool
    changes: tuple[ChangeMark, ...]


@dataclass(frozen=True)
class ChartBar:
    run: Run
    x: int
    state: str | None  # None when the run has no result for the measure
    passed: int
    observed: int
    passed_height: int
    observed_height: int


@dataclass(frozen=True)
class Chart:
    measure: str
    width: int
    height: int
    bars: tuple[ChartBar, ...]
    changes: tuple[tuple[int, ChangeMark], ...]  # x of the dividing line, what changed


@dataclass(frozen=True)
class SiteFacts:
    runs: tuple[RunView, ...]  # newest first
    run_views: Mapping[str, RunView]
    charts: tuple[Chart, ...]
    latest_scorer: int | None


CHART_STEP = 28
CHART_HEIGHT = 64
CHART_MARGIN = 8
CHART_BAR = 16


def site_facts(records: Records, headlines: Mapping[str, RunResult], published: tuple[Run, ...], changelog: Changelog | None) -> SiteFacts:
    scored = [h.scorer_version for h in headlines.values()]
    latest = max(scored) if scored else None
    oldest_first = tuple(reversed(published))
    marks = _change_marks(changelog)
    views = {}
    for run in published:
        result = headlines.get(run.id)
        setup = records.setups.get(run.setup)
        views[run.id] = RunView(
            run=run,
            result=result,
            fingerprint=setup.fingerprint if setup else "",
            merge=bool(setup and setup.merge),
            older_scorer=bool(result and latest is not None and result.scorer_version < latest),
            changes=marks.get(run.id, ()),
        )
    charts = tuple(_chart(measure, oldest_first, headlines, marks) for measure in MEASURES)
    return SiteFacts(runs=tuple(views[r.id] for r in published), run_views=views, charts=charts, latest_scorer=latest)


def _change_marks(changelog: Changelog | None) -> Mapping[str, tuple[ChangeMark, ...]]:
    """Runs that first used a new scorer or suite version, with the changelog row that says so."""
    if changelog is None:
        return {}
    marks = {}
    for run_id, anchors in changed_runs(changelog).items():
        rows = [changelog.row(anchor) for anchor in anchors]
        marks[run_id] = tuple(
            ChangeMark(row.kind, str(row.version) if row.kind == "scorer" else f"{row.suite} {row.suite_version}", row.anchor)
            for row in rows
        )
    return marks


def headline(result: RunResult) -> RunResult:
    """A run's outcome and measures without its case results, observations and seal: all the overview and charts need."""
    return replace(result, cases=(), observations=(), seal=None)


def _chart(measure: str, runs: tuple[Run, ...], results: Mapping[str, RunResult], marks: Mapping[str, tuple[ChangeMark, ...]]) -> Chart:
    """Bars of observed (outline) and passed (filled) counts per run, on the measure's own scale; no percentages."""
    counts = []
    for run in runs:
        result = results.get(run.id)
        found = next((m for m in result.measures if m.measure == measure), None) if result else None
        if result is not None and result.outcome == CRASHED_STATE:
            counts.append((run, CRASHED_STATE, 0, 0))
        elif found is None:
            counts.append((run, None, 0, 0))
        else:
            counts.append((run, found.state, found.passed, found.observed))
    top = max((c[3] for c in counts), default=0) or 1
    bars = []
    changes = []
    for index, (run, state, passed, observed) in enumerate(counts):
        x = CHART_MARGIN + index * CHART_STEP
        bars.append(ChartBar(run, x, state, passed, observed, round(CHART_HEIGHT * passed / top), round(CHART_HEIGHT * observed / top)))
        changes.extend((x - (CHART_STEP - CHART_BAR) // 2, mark) for mark in marks.get(run.id, ()))
    width = CHART_MARGIN * 2 + max(len(runs), 1) * CHART_STEP
    return Chart(measure, width, CHART_HEIGHT + 2 * CHART_MARGIN + 12, tuple(bars), tuple(changes))


def run_summaries(results: Mapping[str, RunResult], published: tuple[Run, ...]):
    """Per run, its headline (headline) and its state per (case version, repetition): all the overview and the case
    pages need of every run, small enough to keep, read with each run's results unpacked once."""
    headlines: dict[str, RunResult] = {}
    states: dict[str, Mapping[tuple[str, int], str]] = {}
    for run in published:
        result = results.get(run.id)
        if result is not None:
            headlines[run.id] = headline(result)
        states[run.id] = {(c.case_version, c.repetition): c.state for c in result.cases} if result is not None else {}
    return headlines, states
