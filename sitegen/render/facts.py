"""What the overview and the run pages say about every published run: views, outcomes and the charts per measure."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Collection, Mapping

from sitegen.changelog.changes import ASSESSMENT, SCORER, SETUP, SUITE, Changelog, changed_runs, derived_anchor
from sitegen.core.model import CRASHED_STATE, Records, Run, RunResult
from sitegen.load.spool import each_run
from sitegen.score.comparison import NoComparison, RunDifference, why_not_compared
from sitegen.score.measures.registry import MEASURES


@dataclass(frozen=True)
class ChangeMark:
    kind: str  # scorer | suite
    value: str
    anchor: str


@dataclass(frozen=True)
class RunView:
    run: Run
    result: RunResult | None  # on the overview, its headline only (RunResult.headline); the run page gets the whole result
    fingerprint: str
    merge: bool
    older_scorer: bool
    changes: tuple[ChangeMark, ...]
    sealed: bool = False  # its results entry records the digests of its inputs (pages read results without seals)


@dataclass(frozen=True)
class ChartBar:
    """One run's column: what it did not pass (failed or awaiting confirmation) on the chart's scale, and its state."""

    run: Run
    state: str | None  # None when the run has no result for the measure
    passed: int
    observed: int
    not_passed: int
    not_passed_height: int
    centre: int  # x of the column's middle, where its count, shape and symbol stand


@dataclass(frozen=True)
class ChartBreak:
    """A break in the series (the statistics offices' "b"): from this run on, counts are not comparable with before."""

    label: str  # b1, b2, ... in the order of the runs
    x: int  # between the last run before and the first run after
    run: Run  # the first run after the break
    marks: tuple[ChangeMark, ...]  # what changed there, each with its changelog row


@dataclass(frozen=True)
class Chart:
    measure: str
    width: int
    height: int
    bars: tuple[ChartBar, ...]
    breaks: tuple[ChartBreak, ...]
    top: int  # the scale's top: the most observations any run did not pass (at least 1)
    baseline: int  # y of the scale's 0
    plot_top: int  # y of the scale's top


@dataclass(frozen=True)
class SiteFacts:
    runs: tuple[RunView, ...]  # newest first
    run_views: Mapping[str, RunView]
    charts: tuple[Chart, ...]
    latest_scorer: int | None


# a column per run; rows from the top: break labels, the plot (each bar's count above it), the state's shape, its symbol
CHART_STEP = 28
CHART_MARGIN = 8
CHART_LEFT = 26  # room for the scale's labels
CHART_PLOT_TOP = 26  # the scale's top; the bar's count stands above it, the break labels above that
CHART_BASELINE = 66
CHART_ROWS_BELOW = 32  # the state's shape, then its symbol


def site_facts(records: Records, headlines: Mapping[str, RunResult], published: tuple[Run, ...], changelog: Changelog | None,
               sealed: Collection[str] = ()) -> SiteFacts:
    """What the overview and every run page show of the runs; `sealed` names the runs whose results carry a seal."""
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
            sealed=run.id in sealed,
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


@dataclass(frozen=True)
class Uncompared:
    """What a run page says in place of a comparison (score/comparison.py says why), each difference that keeps the
    counts apart with the anchor of the changelog row of this run's side (None when the changelog has none)."""

    why: NoComparison
    differences: tuple[tuple[RunDifference, str | None], ...]


# the changelog row that a difference in how runs were measured has; a matching method has none of its own (its
# scorer version's row names it, see _changelog_kind)
_CHANGELOG_KIND = {"suite": SUITE, "scorer": SCORER, "assessment": ASSESSMENT, "stages": SETUP}


def _changelog_kind(difference: RunDifference, differences: tuple[RunDifference, ...]) -> str | None:
    """The kind of changelog row that says what `difference` changed to: a matching method that changed with the scorer
    is named by the new scorer's row; one that changed alone has no row that would say so."""
    if difference.what == "matching_method":
        return SCORER if any(d.what == "scorer" for d in differences) else None
    return _CHANGELOG_KIND.get(difference.what)


def uncompared_runs(records: Records, outcomes: Mapping[str, str | None], comparisons: Mapping[str, object],
                    changelog: Changelog | None) -> Mapping[str, Uncompared]:
    """Each published run the site compares with no earlier run (absent from `comparisons`), and why."""
    counted = {run_id for run_id, outcome in outcomes.items() if outcome is not None and outcome != CRASHED_STATE}
    anchors = {row.anchor for row in changelog.rows} if changelog is not None else set()
    found = {}
    for run in records.published_runs:
        if run.id in comparisons:
            continue
        why = why_not_compared(records, run, counted)
        if why is None:
            continue
        setup = records.setups.get(run.setup)
        fingerprint = setup.fingerprint if setup else ""
        linked = []
        for difference in why.differences:
            kind = _changelog_kind(difference, why.differences)
            anchor = derived_anchor(kind, run, fingerprint) if kind is not None else None
            linked.append((difference, anchor if anchor in anchors else None))
        found[run.id] = Uncompared(why, tuple(linked))
    return found


def _chart(measure: str, runs: tuple[Run, ...], results: Mapping[str, RunResult], marks: Mapping[str, tuple[ChangeMark, ...]]) -> Chart:
    """Per run, the observations it did not pass on a scale from 0 to the most any run did not pass, so one miss in 177
    shows; its state by shape and symbol; a labelled break where the scorer or suite changed. No percentages."""
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
    top = max((observed - passed for _, _, passed, observed in counts), default=0) or 1
    plot = CHART_BASELINE - CHART_PLOT_TOP
    bars = []
    breaks = []
    for index, (run, state, passed, observed) in enumerate(counts):
        left = CHART_LEFT + index * CHART_STEP
        missed = observed - passed
        height = max(2, round(plot * missed / top)) if missed else 0  # a single miss never vanishes in rounding
        bars.append(ChartBar(run, state, passed, observed, missed, height, left + CHART_STEP // 2))
        if marks.get(run.id) and index > 0:  # the first run starts the series: nothing before it to compare with
            breaks.append(ChartBreak(f"b{len(breaks) + 1}", left, run, marks[run.id]))
    width = CHART_LEFT + CHART_MARGIN + max(len(runs), 1) * CHART_STEP
    return Chart(measure, width, CHART_BASELINE + CHART_ROWS_BELOW, tuple(bars), tuple(breaks), top, CHART_BASELINE, CHART_PLOT_TOP)


def run_summaries(results: Mapping[str, RunResult], published: tuple[Run, ...]):
    """Per run, its headline (RunResult.headline) and its state per (case version, repetition), and the runs sealed: all the
    overview and the case pages need of every run, small enough to keep, read with each run's results unpacked once."""
    headlines: dict[str, RunResult] = {}
    states: dict[str, Mapping[tuple[str, int], str]] = {}
    sealed = set()
    for run_id, result in each_run(results, [run.id for run in published]):  # the pages come back to each run in turn
        if result is not None:
            headlines[run_id] = result.headline()  # all the overview and charts need
            if result.seal is not None:
                sealed.add(run_id)
        states[run_id] = {(c.case_version, c.repetition): c.state for c in result.cases} if result is not None else {}
    return headlines, states, frozenset(sealed)
