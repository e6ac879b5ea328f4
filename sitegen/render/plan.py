"""The page plan: what renders run and case pages, split into tasks that forked workers can take in any number."""

from __future__ import annotations

import re
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Mapping, Sequence

from sitegen.core.errors import CacheError
from sitegen.core.files import HeldFile
from sitegen.core.model import Pair, Records, Run, RunResult
from sitegen.load.spool import release
from sitegen.render.cases import Verdicts, collect_case, render_case_page, render_case_runs
from sitegen.render.environment import Detail, Page, Renderer, case_path
from sitegen.render.pagecache import PageCache, page_key, run_token, text_key
from sitegen.render.views import index_cases, index_observations, run_grid, run_listings
from sitegen.score.reasons import ReasonSource


CASE_CHUNK = 16  # case versions per task sent to a worker: large enough to amortise, small enough to stream
RUN_TASK_PARTS = 8  # a large run's own pages (thousands of list pages) split over tasks, so no worker waits on one
# tasks in flight per process: each hands back what writing its pages returned (a few hundred bytes a page), so many can
# wait in order behind a long one while the building process renders short ones itself (short_task)
AHEAD_PER_JOB = 8


@dataclass(frozen=True)
class PageJob:
    """What rendering a run's pages and case version pages needs; each forked worker receives it once (ordered_map's context)."""

    records: Records
    results: Mapping[str, RunResult]
    verdicts: Verdicts
    renderers: Mapping[str, Renderer]
    languages: tuple[str, ...]
    runs_by_case: Mapping[str, tuple[Run, ...]]
    states: Mapping[str, Mapping[tuple[str, int], str]]  # run -> (case version, repetition) -> state
    outcomes: Mapping[str, str | None]
    common: Mapping[str, Any]  # what every page shows: site facts, downloads, changelog
    comparisons: Mapping[str, Any]
    write: Callable[[Page], Any] | None
    pairs: Mapping[str, tuple[tuple[Pair, str], ...]]  # pairs_by_case
    reasons: Mapping[str, bytes] = field(default_factory=dict)  # run id -> its observations' reasons, packed
    cache: PageCache | None = None  # case, case-run and run pages by the digest of their inputs (pagecache.py)
    salt: bytes = b""  # what every page is also made from: sitegen, templates, catalogs, configuration, date
    detail: Detail = field(default_factory=Detail)  # which case-run pages are kept, and which runs' lists get pages (--detail-runs)
    held: Mapping[str, HeldFile] = field(default_factory=dict)  # the previous site's pages as the last build left them, by path
    uncompared: Mapping[str, Any] = field(default_factory=dict)  # run id -> why it has no comparison (facts.Uncompared)
    shared: Callable[[str], Sequence[Page]] | None = None  # the pages every build renders, by part (pages.iter_pages: shared)
    _current: dict = field(default_factory=dict)  # per process: the run at hand's case results and own-page inputs, made once

    def render_task(self, task: tuple[str, str | None, Sequence]) -> list[Any]:
        """The task's pages, or with `write` what writing each of them returned."""
        items = self._items(task)
        if self.write is None:
            return [self._page(item) for item in items]
        return [self._written(item) for item in items]

    def render(self, task: tuple[str, str | None, Sequence]) -> list[Page]:
        """A run's own pages, the case pages of some case versions, their pages for one run (in every language), or some of
        the pages every build renders."""
        return [self._page(item) for item in self._items(task)]

    def _items(self, task: tuple[str, str | None, Sequence]) -> list[Any]:
        """The task's pages, each rendered (a Page) or, when the cache holds it, a _Stored to be taken from there."""
        kind, run_id, items = task
        if run_id is not None:
            self._turn_to(run_id)
        if kind == "shared":
            (part,) = items
            return list(self.shared(part))
        if kind == "run":
            (part,) = items
            return self.render_run(run_id, part)
        pages = []
        case_ids = items
        if kind == "case":
            for cv_id in case_ids:
                bundle = collect_case(self.records, cv_id, self.runs_by_case.get(cv_id, ()), self.states, self.outcomes, verdicts=None,
                                      pairs=self.pairs.get(cv_id, ()))
                made: dict[str, str] = {}  # the bundle pickled once for every language, and only with a cache

                def key(lang: str, cv_id=cv_id, bundle=bundle, made=made) -> str:
                    if "digest" not in made:
                        made["digest"] = page_key(b"", "case", bundle)
                    return text_key(self.salt, lang, case_path(cv_id), "case", made["digest"])

                for lang in self.languages:
                    pages.append(self._cached(lang, case_path(cv_id), lambda lang=lang, key=key: key(lang),
                                              lambda lang=lang, bundle=bundle: render_case_page(self.renderers[lang], bundle)))
            return pages
        for cv_id in case_ids:
            run = next(r for r in self.runs_by_case[cv_id] if r.id == run_id)
            made: dict[str, Page] = {}

            def render(lang: str, cv_id=cv_id, run=run) -> Page:
                if "bundle" not in made:  # judged once for every language, and only when some language's page is not cached
                    found, observed = self._run_cases(run.id)
                    made["bundle"] = collect_case(self.records, cv_id, (run,), self.states, self.outcomes, verdicts=self.verdicts,
                                                  case_results=found, pairs=self.pairs.get(cv_id, ()), observations=observed,
                                                  reasons=self._reasons())
                (page,) = render_case_runs(self.renderers[lang], made["bundle"])
                return page

            # the run's results, answers and setup by one digest taken once (run_token); the case version by its own
            rest = case_path(cv_id, run_id)
            pages.extend(self._cached(lang, rest, lambda lang=lang, rest=rest, cv_id=cv_id, run=run: text_key(
                self.salt, lang, rest, "case-run", self._case_digest(cv_id), self._run_token(run)), lambda lang=lang: render(lang))
                for lang in self.languages)
        return pages

    def _turn_to(self, run_id: str) -> None:
        """Tasks come run by run (page_tasks), so a process that turns to another run is done with the one before: its
        unpacked answers and results are let go, where each spool would keep the last two runs (at 10,000 case versions
        a rendering process's peak went from about 677 to 627 MiB with this and the checks letting their runs go)."""
        before = self._current.get("at hand")
        if before is not None and before != run_id:
            release(self.records.answers, before)
            release(self.results, before)
            # and what was made of them, before the next run's is made: else both runs are held at once for a while
            self._current.pop("cases", None)
            self._current.pop("run", None)
        self._current["at hand"] = run_id

    def _run_cases(self, run_id: str) -> tuple[Mapping, Mapping]:
        """The run at hand's case results and observations by case version, indexed once per process when a page needs them."""
        if self._current.get("cases", (None,))[0] != run_id:
            result = self.results.get(run_id)
            self._current["cases"] = (run_id, {run_id: index_cases(result)}, {run_id: index_observations(self.records, result)})
        return self._current["cases"][1:]

    def _run_token(self, run: Run) -> str:
        """A run's run_token, taken once per process."""
        tokens = self._current.setdefault("run tokens", {})
        if run.id not in tokens:
            tokens[run.id] = run_token(self.records, self.results, run)
        return tokens[run.id]

    def _cached(self, lang: str, rest: str, key_of: Callable[[], str], render: Callable[[], Page]) -> Any:
        """The page rendered, or a _Stored naming the cache's entry under `key_of()` when its inputs are unchanged (the entry
        read only if needed); the key is taken only with a cache."""
        if self.cache is None:
            return render()
        key = key_of()
        path = f"{lang}/{rest}"
        held = self.held.get(path)
        if held is not None and held.key == key:  # the last build wrote this page there: its entry's head need not be read
            return _Stored(path, key, held.size, held.sha256, render, held)
        known = self.cache.digest(key)
        if known is not None:
            return _Stored(path, key, known[0], known[1], render)
        return _Made(self._fresh(key, render), key)

    def _fresh(self, key: str, render: Callable[[], Page]) -> Page:
        """The page rendered now, and kept in the cache under `key`."""
        page = render()
        self.cache.put(key, page.data)
        return page

    def _page(self, item: Any) -> Page:
        """A page's bytes: rendered already, or read from its cache entry (checked against its digest), else rendered now."""
        if isinstance(item, _Made):
            return item.page
        if not isinstance(item, _Stored):
            return item
        data = self.cache.get(item.key)
        if data is not None:
            return Page(item.path, data)
        return self._fresh(item.key, item.render)

    def _written(self, item: Any) -> Any:
        """What `write` returned for the page; a cached page the previous site already holds is linked there without reading
        the entry: unread when the file is still the one the last build left (`held`), else its bytes hashed and compared
        with the entry's digest."""
        if isinstance(item, _Stored):
            relink, reuse = getattr(self.write, "relink", None), getattr(self.write, "reuse", None)
            if item.held is not None and relink is not None:
                found = relink(item.path, item.held)
                if found is not None:
                    return found
            if reuse is not None:
                found = reuse(item.path, item.size, item.sha256, item.key)
                if found is not None:
                    return found
        if isinstance(item, (_Stored, _Made)):
            return self.write(self._page(item), item.key)
        return self.write(item)

    def _case_digest(self, cv_id: str) -> str:
        """A case version's digest (with its invariance pairs and their twin versions) for the keys of its case-run pages,
        taken once per process (its document is most of a key)."""
        digests = self._current.setdefault("case digests", {})
        if cv_id not in digests:
            pairs = self.pairs.get(cv_id, ())  # the twin versions too: an invariance pair's reasons compare both
            digests[cv_id] = page_key(b"", self.records.case_versions[cv_id], pairs,
                                      tuple(self.records.case_versions.get(twin) for _, twin in pairs))
        return digests[cv_id]

    def render_run(self, run_id: str, part: int) -> list[Any]:
        """One of RUN_TASK_PARTS slices of a run's own pages (its page and the continuation pages of its long lists).

        With a cache, the run's list of pages is kept too (under the digest of what they are made from), so a run whose
        pages are all cached is neither unpacked nor listed again; such a page is rendered only when its entry is gone.
        """
        token = self._own_pages_token(run_id) if self.cache is not None else ""
        names = self._own_pages(run_id, token)
        work = [(lang, rest) for lang in self.languages for rest in names]
        return [self._cached(lang, rest, lambda lang=lang, rest=rest: text_key(self.salt, lang, rest, "run", token),
                             lambda lang=lang, rest=rest: self._run_page(run_id, lang, rest))
                for lang, rest in share(work, part, RUN_TASK_PARTS)]

    def _own_pages(self, run_id: str, token: str) -> tuple[str, ...]:
        """The paths (in a language's folder) of a run's own pages, in order: from the cache when kept there and shaped as
        such a list is (the run's page, then distinct pages in its folder), else listed. A list forged with a valid digest
        that names a page of that shape the run does not have stops the build when the page is rendered (_run_page)."""
        names_key = page_key(self.salt, "run pages", token) if self.cache is not None else ""
        if self.cache is not None:
            kept = self.cache.names(names_key)
            own = re.compile(rf"runs/{re.escape(run_id)}/[a-z0-9-]+\.html")
            if kept and kept[0] == f"runs/{run_id}.html" and len(set(kept)) == len(kept) \
                    and all(own.fullmatch(name) for name in kept[1:]):
                return kept
        run, view, listings, comparison = self._run_pages(run_id)
        names = (f"runs/{run.id}.html", *(p.path for x in listings.all() for p in x.pages))
        if self.cache is not None:
            self.cache.put_names(names_key, names)
        return names

    def _own_pages_token(self, run_id: str) -> str:
        """The digest of everything a run's own pages are made from: its run_token, the cases record (the grid lists the
        suite's case versions), what the overview says of the run, its comparison with the previous comparable run (or why
        it has none), and whether its lists get pages of their own (Detail.lists: a newer run can take that from it)."""
        tokens = self._current.setdefault("own pages tokens", {})
        if run_id not in tokens:
            run = next(r for r in self.records.published_runs if r.id == run_id)
            cases = self.records.files.get("cases.json")
            tokens[run_id] = page_key(b"", "run pages", self._run_token(run), cases.sha256 if cases is not None else None,
                                      replace(self.common["site"].run_views[run.id], result=None), self.comparisons.get(run.id),
                                      self.uncompared.get(run.id), self.detail.lists(run.id))
        return tokens[run_id]

    def _run_page(self, run_id: str, lang: str, rest: str) -> Page:
        """One of a run's own pages, rendered from the run alone (nothing every page shares but the salt's parts)."""
        run, view, listings, comparison = self._run_pages(run_id)
        renderer = self.renderers[lang]
        if rest == f"runs/{run.id}.html":
            shown = [o for x in listings.observations for o in x.shown]
            return renderer.page("run.html.j2", rest, {"run_view": view, "listings": listings, "comparison": comparison,
                                                       "uncompared": self.uncompared.get(run.id),
                                                       "reasons": self._reasons().reasons(run.id, shown)})
        found = next(((x, p) for x in listings.all() for p in x.pages if p.path == rest), None)
        if found is None:  # only a forged list of the run's pages in the cache names one it does not have
            raise CacheError(f"the cache's list of run {run_id}'s pages names {rest}, which the run does not have: "
                             "the cache folder was altered; remove it or build without --cache")
        listing, page = found
        items = listing.items[page.first - 1 : page.last]
        reasons = self._reasons().reasons(run.id, items) if listing.kind == "observations" else {}
        return renderer.page("run_list.html.j2", page.path, {"listing": listing, "page": page, "items": items, "reasons": reasons})

    def _reasons(self) -> ReasonSource:
        """The structured reasons of the run at hand's observations: unpacked (or derived) once per process as pages need them."""
        if "reasons" not in self._current:
            self._current["reasons"] = ReasonSource(self.records, self.reasons)
        return self._current["reasons"]

    def _run_pages(self, run_id: str):
        """What every slice of a run's own pages shows, worked out once per process for the run at hand."""
        if self._current.get("run", (None,))[0] != run_id:
            run = next(r for r in self.records.published_runs if r.id == run_id)
            result = self.results.get(run.id)
            comparison = self.comparisons.get(run.id)
            listings = run_listings(run, result, run_grid(self.records, run, result), comparison,
                                    paged=self.detail.lists(run.id))
            view = replace(self.common["site"].run_views[run.id], result=result)
            self._current["run"] = (run_id, (run, view, listings, comparison))
        return self._current["run"][1]


@dataclass(frozen=True)
class _Stored:
    """A page the cache holds under `key`, with the size and digest its entry's head claims; `render` makes it afresh."""

    path: str
    key: str
    size: int
    sha256: str
    render: Callable[[], Page]
    held: HeldFile | None = None  # the previous site's file at `path`, when the last build made it under `key`


@dataclass(frozen=True)
class _Made:
    """A page rendered now and kept in the cache under `key` (which the site's index keeps for the next build)."""

    page: Page
    key: str


def page_tasks(case_ids: Sequence[str], published: Sequence[Run], runs_by_case: Mapping[str, tuple[Run, ...]],
               detail: Callable[[str, str], bool] = lambda cv, run: True) -> list[tuple[str, str | None, Sequence]]:
    """Run by run the run's own pages and its case pages (those `detail` keeps), so a run's answers are unpacked once;
    the case pages, which need no run unpacked, shared out evenly between the runs.

    Within a run, its long tasks (the RUN_TASK_PARTS of its own pages) are spread among the short ones (short_task): the
    building process takes short tasks while its worker renders a long one, and results are handed back in order, so a
    stretch of long tasks, as a run kept in summary only (`--detail-runs`) has, would leave it waiting."""
    case_chunks = [("case", None, case_ids[i : i + CASE_CHUNK]) for i in range(0, len(case_ids), CASE_CHUNK)]
    tasks: list[tuple[str, str | None, Sequence]] = []
    for number, run in enumerate(published):
        in_run = [cv_id for cv_id in case_ids if run in runs_by_case.get(cv_id, ()) and detail(cv_id, run.id)]
        short = [*share(case_chunks, number, len(published)),
                 *(("case-run", run.id, in_run[i : i + CASE_CHUNK]) for i in range(0, len(in_run), CASE_CHUNK))]
        tasks.extend(spread([("run", run.id, (part,)) for part in range(RUN_TASK_PARTS)], short))
    return tasks if published else case_chunks


def spread(long: Sequence[Any], short: Sequence[Any]) -> list[Any]:
    """`long` evenly among `short`, in order, each long task ahead of its share of the short ones."""
    if not long:
        return list(short)
    tasks: list[Any] = []
    for number, task in enumerate(long):
        tasks.append(task)
        tasks.extend(share(short, number, len(long)))
    return tasks


def share(items: Sequence[Any], number: int, parts: int) -> Sequence[Any]:
    """The `number`th of `parts` consecutive slices of `items`, their sizes differing by one at most: one rule for every
    even split of the rendering work (a run's own pages, the case pages between the runs, short tasks between long ones)."""
    return items[len(items) * number // parts : len(items) * (number + 1) // parts]


def short_task(task: tuple[str, str | None, Sequence]) -> bool:
    """Whether the building process takes `task` itself when the workers are busy (core/workers.ordered_map's `here`): a
    chunk of case versions, not a part of a run's own pages or of the shared pages, which take many times longer."""
    return task[0] in ("case", "case-run")


def render_in_worker(job: PageJob, task: tuple[str, str | None, Sequence]) -> list[Any]:
    """What a forked worker does with each task: its job came with the worker, the task with the call."""
    return job.render_task(task)
