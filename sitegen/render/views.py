"""A run page's lists and grid, and the indexes of a run's results that run and case pages look states up in."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from sitegen.core.model import CRASHED, CRASHED_STATE, CaseResult, Observation, Records, Run, RunResult
from sitegen.load.spool import answer_statuses
from sitegen.render.links import case_path
from sitegen.score.measures.registry import MEASURES, stage_of


def index_cases(result: RunResult | None) -> Mapping[tuple[str, int], CaseResult]:
    """Index a run's case results once, so every case page looks its states up without scanning."""
    return {} if result is None else {(c.case_version, c.repetition): c for c in result.cases}


def index_observations(records: Records, result: RunResult | None) -> Mapping[tuple[str, int], tuple[Observation, ...]]:
    """A run's observations under every (case version, repetition) they concern, in the result's order.

    A stability observation concerns both repetitions it compares ("1-2"); a pair observation, recorded under the
    pair's first version, concerns its second version too.
    """
    if result is None:
        return {}
    twins = {pair.id: pair.versions for pair in records.pairs}
    found: dict[tuple[str, int], list[Observation]] = {}
    for o in result.observations:
        versions = twins.get(o.subject, (o.case_version,)) if o.measure == "INVARIANT_PAIRS" else (o.case_version,)
        for cv_id in dict.fromkeys(versions):
            for rep in dict.fromkeys(o.repetition.split("-")):
                found.setdefault((cv_id, int(rep)), []).append(o)
    return {key: tuple(items) for key, items in found.items()}


def runs_by_case(records: Records, published: tuple[Run, ...]) -> Mapping[str, tuple[Run, ...]]:
    found: dict[str, list[Run]] = {}
    for run in published:
        try:
            suite = records.suite(run.suite, run.suite_version)
        except KeyError:
            continue
        for cv_id in suite.case_versions:
            found.setdefault(cv_id, []).append(run)
    return {cv: tuple(runs) for cv, runs in found.items()}


RUN_PAGE_ITEMS = 10  # observations per measure, regressions and grid rows shown on a run page itself
GRID_PAGE_ROWS = 50  # case versions in the grid on a run page itself
LIST_PAGE_ITEMS = 200  # items per continuation page: a large run stays readable on a phone
NEARBY_PAGES = 2  # continuation pages a list page links on either side of itself, besides the first and the last


@dataclass(frozen=True)
class ListPage:
    path: str
    first: int  # 1-based, inclusive
    last: int

    @property
    def name(self) -> str:
        """Its file name: the pages of a list share a folder, so each links the others by name alone."""
        return self.path.rpartition("/")[2]


@dataclass(frozen=True)
class Listing:
    """A list on a run page: the first items shown there, all of them on continuation pages when there are more."""

    run: Run
    kind: str  # observations | regressions | grid
    measure: str | None
    items: tuple
    crashed_run: bool = False
    paged: bool = True  # False: no continuation pages; the run page shows the first items, the downloads hold them all

    @property
    def total(self) -> int:
        return len(self.items)

    @property
    def limit(self) -> int:
        return GRID_PAGE_ROWS if self.kind == "grid" else RUN_PAGE_ITEMS

    @property
    def shown(self) -> tuple:
        return self.items[: self.limit]

    @property
    def summarised(self) -> bool:
        """More items than the run page shows, and no continuation pages for them (environment.Detail.lists)."""
        return not self.paged and self.total > self.limit

    @property
    def pages(self) -> tuple[ListPage, ...]:
        if self.total <= self.limit or not self.paged:
            return ()
        name = f"{self.kind}-{self.measure.lower().replace('_', '-')}" if self.measure else self.kind
        return tuple(ListPage(f"runs/{self.run.id}/{name}-{n}.html", first + 1, min(first + LIST_PAGE_ITEMS, self.total))
                     for n, first in enumerate(range(0, self.total, LIST_PAGE_ITEMS), start=1))


@dataclass(frozen=True)
class RunListings:
    observations: tuple[Listing, ...]  # one per measure that has any
    regressions: Listing | None
    grid: Listing

    def all(self) -> tuple[Listing, ...]:
        return (*self.observations, *((self.regressions,) if self.regressions else ()), self.grid)


def run_listings(run: Run, result: RunResult | None, grid, comparison: Any, *, paged: bool = True) -> RunListings:
    """Split a run's long lists so its page shows the first items and continuation pages hold the rest; with `paged`
    False, its observations and regressions get no continuation pages (the grid always does)."""
    observations = result.observations if result is not None else ()
    groups = tuple(
        Listing(run, "observations", measure, tuple(o for o in observations if o.measure == measure), paged=paged)
        for measure in MEASURES
        if any(o.measure == measure for o in observations)
    )
    regressions = Listing(run, "regressions", None, tuple(comparison.regressions), paged=paged) if comparison is not None else None
    crashed = result is not None and result.outcome == CRASHED_STATE
    return RunListings(groups, regressions, Listing(run, "grid", None, tuple(grid), crashed_run=crashed))


def run_grid(records: Records, run: Run, result: RunResult | None) -> tuple[tuple[str, tuple[GridCell, ...]], ...]:
    """Rows of (case version, its cells per repetition) in the suite's order."""
    try:
        versions = records.suite(run.suite, run.suite_version).case_versions
    except KeyError:
        versions = ()
    index = index_cases(result)
    statuses = answer_statuses(records.answers, run.id)  # the answers' and reruns' statuses, the answers left packed
    reps = range(1, run.repetitions + 1)
    rows = []
    for cv in versions:
        cells = []
        for rep in reps:
            status = statuses.get((cv, rep))
            crashed = status is not None and CRASHED in status
            found = index.get((cv, rep))
            cells.append(GridCell(rep, found.state if found is not None else None, status is not None, crashed))
        rows.append((cv, tuple(cells)))
    return tuple(rows)


@dataclass(frozen=True)
class GridCell:
    repetition: int
    state: str | None  # None: no result for it
    answered: bool
    crashed: bool  # the answer or its rerun crashed


def same_runs(items: Sequence[Any], *fields: str) -> tuple[tuple[Any, int, int], ...]:
    """Consecutive repetitions that show the same thing (equal `fields`), as (the first's item, its repetition, the last's
    repetition): a case whose repetitions agree is said once, "Repetitions 1–3: Passed", linked to the first."""
    found: list[list[Any]] = []
    for item in items:
        key = tuple(getattr(item, name) for name in fields)
        if found and found[-1][3] == key and found[-1][2] == item.repetition - 1:
            found[-1][2] = item.repetition
        else:
            found.append([item, item.repetition, item.repetition, key])
    return tuple((item, first, last) for item, first, last, _ in found)


def listed_observations(items: Sequence[Observation], reasons: Mapping[Observation, Any], detail: Any, run_id: str,
                        anchor: Any) -> tuple[tuple[Observation, str, Any], ...]:
    """A run list's observations as it shows them: (observation, where it links below the language folder, its structured
    reason or None), worked out here rather than by three template calls per item of lists thousands long."""
    return tuple((o, detail.link(o.case_version, run_id, anchor(o.repetition, stage_of(o.measure, o.stage))), reasons.get(o))
                 for o in items)


def grid_rows(rows: Sequence[tuple[str, Sequence[GridCell]]], detail: Any, run_id: str, anchor: Any) -> tuple[tuple[str, str, tuple], ...]:
    """A run grid's rows as it shows them: (case version, its case page, its cells as (cell, first repetition, last
    repetition, where the cell links)), the repetitions that agree joined (same_runs); worked out here, not per cell by
    template calls."""
    return tuple((cv, case_path(cv), tuple((cell, first, last, detail.link(cv, run_id, anchor(first)))
                                          for cell, first, last in same_runs(cells, "state", "answered", "crashed")))
                 for cv, cells in rows)


def page_window(pages: Sequence[ListPage], current: ListPage) -> tuple[ListPage | None, ...]:
    """The pages a continuation page's navigation names: the first, the last and the NEARBY_PAGES on either side of it,
    None for each gap. Every page linked every other (at 10,000 case versions 130 links on each of 130 pages, 66 MiB
    of the site); each is still reached from the run page, which links them all, or by a few steps from any other."""
    at = pages.index(current)
    kept = sorted({0, len(pages) - 1, *range(max(0, at - NEARBY_PAGES), min(len(pages), at + NEARBY_PAGES + 1))})
    out: list[ListPage | None] = []
    for before, index in zip([None, *kept], kept):
        if before is not None and index - before > 1:
            out.append(None)
        out.append(pages[index])
    return tuple(out)
