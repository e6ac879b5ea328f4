"""Renders every page of the site, in each language, from records, scored results and the changelog."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence
from xml.sax.saxutils import escape

from jinja2 import Environment, FileSystemLoader, StrictUndefined
from markupsafe import Markup

from sitegen.changelog import Changelog, changed_runs
from sitegen.markup import render_markdown
from sitegen.errors import Diagnostic, PublicationError
from sitegen.formatting import LocaleFormat
from sitegen.model import (
    CRASHED,
    CRASHED_STATE,
    MEASURES,
    Answer,
    CaseResult,
    CaseVersion,
    InMemoryFile,
    Observation,
    Pair,
    Records,
    Run,
    RunResult,
    SourceFile,
    StageVerdict,
)
from sitegen.publication import collect_downloads
from sitegen.templating import SiteEnvironment, escape_output
from sitegen.workers import ordered_map

TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
STATIC_FILES = ("favicon.svg", "site.css")  # in templates/static/, written as they are under static/

# The case each measure's example on the method page is taken from (the method page's own choices).
EXAMPLE_CASES = {
    "GROUNDING": "cure-unchecked",
    "CLEAN_CASE_FLAWS": "tap-sample",
    "PROHIBITED_OUTPUT": "seal-detail-missing",
    "QUOTE_FIDELITY": "figure-without-document",
    "REDUCER_SURVIVAL": "request-refused",
    "INVARIANT_PAIRS": "licence-gender-flawed-feminine",
    "IDENTICAL_INPUT_STABILITY": "papers-location-unstated",
}

SECTIONS = ("matching", "glossary", "outcomes", "release", "downloads", "changelog-intro", "accessibility")
PAGE_PROSE = frozenset({"accessibility"})  # prose that is a whole page rather than a section of one

# A sitemap file may list at most 50,000 URLs (sitemaps.org); beyond that an index points to parts.
SITEMAP_LIMIT = 50_000

Verdicts = Callable[[Answer, str, bool], StageVerdict]


@dataclass(frozen=True)
class Page:
    """One file of the site: where it goes (POSIX, relative to the site root) and its exact bytes."""

    path: str
    data: bytes


@dataclass(frozen=True)
class DownloadRow:
    """A file served under downloads/, with the size and checksum of exactly the bytes written."""

    name: str
    size: int
    sha256: str
    schema: bool


@dataclass(frozen=True)
class MarkedLine:
    """One document line split around the part a quote or passage covers."""

    number: int
    before: str
    marked: str
    after: str


@dataclass(frozen=True)
class RepetitionInput:
    """One repetition of one run of one case version, with the verdicts of every stage already computed."""

    repetition: int
    state: str | None  # None: no result for it
    result: CaseResult | None  # with the counts per measure; only where the run's own case page needs them
    answer: Answer | None
    verdicts: tuple[tuple[str, StageVerdict], ...]
    rerun_verdicts: tuple[tuple[str, StageVerdict], ...]
    # the run's observations of this case version and repetition that did not plainly pass, so a reader sees why here
    observations: tuple[Observation, ...] = ()

    @property
    def marks(self) -> Mapping[tuple[str, str], str]:
        """GROUNDING's result for each (stage, expected finding) missed at first: pending, failed (confirmed) or dismissed."""
        return {(o.stage, o.subject): o.result for o in self.observations if o.measure == "GROUNDING"}


@dataclass(frozen=True)
class CaseRunInput:
    run: Run
    stages: tuple[str, ...]
    outcome: str | None
    repetitions: tuple[RepetitionInput, ...]


@dataclass(frozen=True)
class CaseInput:
    """Everything one case version's pages need, picklable, so case pages could be rendered in other processes."""

    case_version: CaseVersion
    pairs: tuple[tuple[Pair, str], ...]  # (pair, the other version's id)
    runs: tuple[CaseRunInput, ...]  # published runs whose suite holds this version, newest first


# --- entry point ------------------------------------------------------------


def render_pages(records: Records, results: Mapping[str, RunResult], **options: Any) -> tuple[Page, ...]:
    """Every page of iter_pages (same options), held in memory and sorted by path: for tests and small sites.

    `downloads` are the (name under downloads/, file) pairs the writer will publish; the downloads page shows
    sizes and checksums of exactly these files' bytes. Without it, the published records files are listed.
    """
    return tuple(sorted(iter_pages(records, results, **options), key=lambda p: p.path))


def iter_pages(
    records: Records,
    results: Mapping[str, RunResult],
    *,
    verdicts: Verdicts,
    changelog: Changelog | None,
    catalogs: Mapping[str, Any],
    build_date: str,
    downloads: Sequence[tuple[str, SourceFile | InMemoryFile]] | None = None,
    content_dir: Path | None = None,
    jobs: int = 1,
    comparisons: Mapping[str, Any] | None = None,
    write: Callable[[Page], Any] | None = None,
) -> Iterator[Any]:
    """The pages of render_pages one at a time, in a fixed order, so a large site can be written without holding it all.

    With jobs > 1 the case and run pages (nearly all of a large site) are rendered in that many forked processes; the
    order, and so every byte, stays the same as with one. With `write` (the writer's PageWriter on its staging folder),
    those pages are written where they were rendered and what `write` returns comes in their place: a page's bytes
    never travel between processes.
    """
    config = records.config
    languages = tuple(config.languages)
    files = tuple((d.name, d.source) for d in collect_downloads(records)) if downloads is None else tuple(downloads)
    listed = tuple(
        DownloadRow(name=name, size=file.size, sha256=file.sha256, schema=name.startswith("schemas/"))
        for name, file in sorted(files, key=lambda item: item[0])
    )
    published = tuple(sorted(records.published_runs, key=lambda r: (r.date, r.id), reverse=True))
    content_root = content_dir or TEMPLATES / "content"
    headlines, states = _run_summaries(results, published)
    site = _site_facts(records, headlines, published, changelog)
    renderers = {lang: Renderer(lang, catalogs[lang], config=config, languages=languages, build_date=build_date) for lang in languages}
    examples = {m: (cv if cv in records.case_versions else None) for m, cv in EXAMPLE_CASES.items()}
    paths: list[str] = []  # for the sitemap; only paths are kept, never the pages

    def keep(page: Page) -> Page:
        paths.append(page.path)
        return page

    for lang in languages:
        renderer = renderers[lang]
        content = load_content(content_root, lang)
        common = {"site": site, "downloads": listed, "changelog": changelog}
        yield keep(renderer.page("index.html.j2", "index.html", common))
        yield keep(renderer.page("method.html.j2", "method.html", {**common, "content": content, "examples": examples}))
        yield keep(renderer.page("changelog.html.j2", "changelog.html", {**common, "content": content}))
        yield keep(renderer.page("downloads.html.j2", "downloads.html", {**common, "content": content}))
        yield keep(renderer.page("accessibility.html.j2", "accessibility.html", {**common, "content": content}))
    default = renderers[config.default_language]
    yield keep(default.page("index.html.j2", "index.html", {"site": site, "downloads": listed, "changelog": changelog}, at_root=True))
    yield keep(default.page("404.html.j2", "404.html", {}, at_root=True, standalone=True))
    runs_by_case = _runs_by_case(records, published)
    pairs = pairs_by_case(records)
    case_ids = sorted(records.case_versions)
    job = _PageJob(records, results, verdicts, renderers, languages, runs_by_case, states,
                   {run_id: headline.outcome for run_id, headline in headlines.items()},
                   {"site": site, "downloads": listed, "changelog": changelog}, comparisons or {}, write, pairs)
    # Case pages first, then run by run the run's own pages and its case pages: a run's answers are unpacked once.
    tasks: list[tuple[str, str | None, Sequence]] = [("case", None, case_ids[i : i + CASE_CHUNK])
                                                      for i in range(0, len(case_ids), CASE_CHUNK)]
    for run in published:
        tasks.extend(("run", run.id, (part,)) for part in range(RUN_TASK_PARTS))
        in_run = [cv_id for cv_id in case_ids if run in runs_by_case.get(cv_id, ())]
        tasks.extend(("case-run", run.id, in_run[i : i + CASE_CHUNK]) for i in range(0, len(in_run), CASE_CHUNK))
    if jobs <= 1 or len(case_ids) < 2 * CASE_CHUNK:
        for task in tasks:
            yield from map(keep, job.render_task(task))
    else:
        for pages in ordered_map(_render_task, tasks, jobs=jobs, initializer=_start_page_worker, initargs=(job,)):
            yield from map(keep, pages)
    for name in STATIC_FILES:
        yield keep(Page(f"static/{name}", (TEMPLATES / "static" / name).read_bytes()))
    yield from render_sitemap(paths, base_url=config.base_url, build_date=build_date)


# --- one language's templates ----------------------------------------------------


class Renderer:
    """One compiled Jinja environment per locale, so templates compile once and gettext never crosses languages."""

    def __init__(self, lang: str, translations: Any, *, config: Any, languages: tuple[str, ...], build_date: str):
        self.lang = lang
        self.config = config
        self.languages = languages
        self.build_date = build_date
        env = SiteEnvironment(
            loader=FileSystemLoader(str(TEMPLATES)),
            autoescape=True,
            undefined=StrictUndefined,
            extensions=["jinja2.ext.i18n"],
            trim_blocks=True,
            lstrip_blocks=True,
            auto_reload=False,  # templates never change during a build; spares a stat per page and template
        )
        _RememberedTranslations(translations).install(env)
        env.globals.update(
            fmt=LocaleFormat(lang),
            lang=lang,
            MEASURES=MEASURES,
            config=config,
            build_date=build_date,
            case_path=case_path,
            anchor=repetition_anchor,
        )
        env.globals["word"] = Words(env.get_template("macros.html.j2").module)
        self.env = env
        self.case_rows = env.get_template("case_rows.html.j2").module  # after `word`: a module sees the globals of its making

    def page(self, template: str, rest: str, context: Mapping[str, Any], *, at_root: bool = False, standalone: bool = False) -> Page:
        """Render `template` as the page `rest` of this language, or at the site root for the root copies.

        A standalone page (the 404) has no alternates, and its links are relative like every page's, so the site works
        from whatever path it is served at.
        """
        path = rest if at_root else f"{self.lang}/{rest}"
        root = "../" * path.count("/")
        url = self.config.base_url
        html = self.env.get_template(template).render(
            **context,
            path=path,
            rest=rest,
            root=root,
            base=f"{root}{self.lang}/",
            others=tuple(lang for lang in self.languages if lang != self.lang),
            switch_rest="index.html" if standalone else rest,
            alternates=() if standalone else tuple((lang, f"{url}{lang}/{rest}") for lang in self.languages),
            x_default=f"{url}{self.config.default_language}/{rest}",
            canonical=None if standalone else f"{url}{self.lang}/{rest}",
        )
        return Page(path, html.encode("utf-8"))


class _RememberedTranslations:
    """A catalog's answers remembered as the Markup templates get: every page asks for the same few hundred strings.

    The callables stand in for Jinja's newstyle gettext wrappers (autoescape is always on in these environments) and
    give the same values: the translation as Markup, %-formatted with the call's variables (escaped). A call with no
    variables of its own always yields the same Markup, so it is formatted once.
    """

    def __init__(self, translations: Any):
        self._translations = translations
        self._fixed: dict[tuple, Markup] = {}
        self._singular: dict[tuple, Markup] = {}
        self._plural: dict[tuple, Markup] = {}

    def install(self, env: Environment) -> None:
        """Put the callables where the i18n extension's {% trans %} and _() look for them."""
        env.install_gettext_callables(self.gettext, self.ngettext, newstyle=True, pgettext=self.pgettext,
                                      npgettext=self.npgettext)
        # The extension wrapped them; these already are the wrapped kind, and _ need not look gettext up per call.
        env.globals.update(_=self.gettext, gettext=self.gettext, ngettext=self.ngettext, pgettext=self.pgettext,
                           npgettext=self.npgettext)

    def gettext(self, message: str, /, **variables: Any) -> Markup:
        if not variables:
            key = (None, message)
            found = self._fixed.get(key)
            if found is None:
                found = self._fixed[key] = Markup(self._translations.gettext(message)) % variables
            return found
        key = (None, message)
        if key not in self._singular:
            self._singular[key] = Markup(self._translations.gettext(message))
        return self._singular[key] % variables

    def pgettext(self, context: str, message: str, /, **variables: Any) -> Markup:
        if not variables:
            key = (context, message)
            found = self._fixed.get(key)
            if found is None:
                found = self._fixed[key] = Markup(self._translations.pgettext(context, message)) % {"context": context}
            return found
        variables.setdefault("context", context)
        key = (context, message)
        if key not in self._singular:
            self._singular[key] = Markup(self._translations.pgettext(context, message))
        return self._singular[key] % variables

    def ngettext(self, singular: str, plural: str, n: int, /, **variables: Any) -> Markup:
        variables.setdefault("num", n)
        key = (None, singular, plural, n)
        if key not in self._plural:
            self._plural[key] = Markup(self._translations.ngettext(singular, plural, n))
        return self._plural[key] % variables

    def npgettext(self, context: str, singular: str, plural: str, n: int, /, **variables: Any) -> Markup:
        variables.setdefault("context", context)
        variables.setdefault("num", n)
        key = (context, singular, plural, n)
        if key not in self._plural:
            self._plural[key] = Markup(self._translations.npgettext(context, singular, plural, n))
        return self._plural[key] % variables


class Memo(dict):
    """A macro's output per argument, rendered on first use: labels repeat on every page, their wording never varies."""

    def __init__(self, macro: Callable[..., Any]):
        super().__init__()
        self.macro = macro

    def __missing__(self, key: Any) -> Any:
        value = self[key] = self.macro(key)
        return value


class Words:
    """The short labels of one language (states, kinds, categories, reasons), each macro of macros.html.j2 memoized."""

    def __init__(self, macros: Any):
        self.state = Memo(lambda state: macros.state_badge(state, code=False))
        self.state_code = Memo(macros.state_badge)
        self.kind = Memo(macros.kind_word)
        self.yes_no = Memo(macros.yes_no)
        self.lines = Memo(macros.lines_ref)
        self.stage = Memo(macros.stage_name)
        self.evidence = Memo(macros.evidence_word)
        self.reason = Memo(macros.reason_word)
        self.measure = Memo(macros.measure_title)
        self.result = Memo(macros.result_word)
        self.first_miss = Memo(macros.first_miss_word)
        self.document_type = Memo(macros.document_type_word)
        self.category = Memo(macros.category_word)
        self.missed = macros.phrase("missed")
        self.not_found = macros.phrase("not_found")
        self.nothing_quoted = macros.phrase("nothing_quoted")
        self.no_trace = macros.phrase("no_trace")
        self.support = macros.phrase("support")
        self.stage_open = Memo(lambda key: macros.stage_open(*key))
        self.expected_open = Memo(macros.expected_open)
        self.findings_open = Memo(lambda key: macros.findings_open(*key))
        self.repetition = Memo(macros.repetition_word)
        self.repetition_ref = Memo(macros.repetition_ref)
        self.counts = Counts(macros.counts_list)


class Counts:
    """A repetition's passed-of-observed list, rendered once per distinct set of counts: few sets recur across many cases."""

    def __init__(self, macro: Callable[[Mapping[str, Any]], Any]):
        self.macro = macro
        self.done: dict[tuple, Any] = {}

    def __call__(self, measures: Mapping[str, Any]) -> Any:
        key = tuple(measures.items())
        found = self.done.get(key)
        if found is None:
            found = self.done[key] = self.macro(measures)
        return found


_SECTION = Markup("<§>")  # stands in for a section id while a row is rendered: see CaseRows.expected


class CaseRows:
    """One case version's verdict rows and excerpts in one language, each rendered once: runs, repetitions and stages repeat them.

    render_case makes one per case and language, so nothing is kept beyond the case's own pages.
    """

    def __init__(self, macros: Any, document: str):
        self._macros = macros
        self._document = document
        self._excerpts: dict[tuple, tuple[Any, bool]] = {}
        self._expected: dict[tuple, Any] = {}
        self._findings: dict[tuple, Any] = {}
        self._reviewers: dict[int, tuple[Any, Mapping[str, str]]] = {}

    def expected(self, section_id: str, verdict: Any, mark: str | None = None) -> Any:
        """An expected finding's row in a stage's section: rendered once per verdict, the section's id put in after.

        The row names its section in its id and its links. It is rendered with a stand-in for the section id that no
        rendered text can contain (a bare "<" is always escaped, and the templates never write "<§"), then split there.
        """
        parts = self._expected.get((verdict, mark))
        if parts is None:
            passage = verdict.expected.passage
            excerpt = None if passage is None else self._excerpt(passage.quote, passage.lines)[0]
            parts = self._expected[(verdict, mark)] = tuple(str(self._macros.expected_row(verdict, _SECTION, excerpt, mark)).split(_SECTION))
        return Markup(escape_output(section_id).join(parts))

    def finding(self, verdict: Any, stage: str, engine_answer: Any) -> Any:
        """A finding's row after its opening tag, which is the only part that names the section."""
        finding = verdict.finding
        who = self._reviewer_of(engine_answer, finding.id) if stage == "reviewer" else None
        key = (verdict, stage, who)
        found = self._findings.get(key)
        if found is None:
            excerpt, marked = self._excerpt(finding.quote, finding.location)
            found = self._findings[key] = self._macros.finding_cells(verdict, stage, who, excerpt if marked else "")
        return found

    def _excerpt(self, quote: str | None, lines: tuple[int, int] | None) -> tuple[Any, bool]:
        """The rendered excerpt of passage_lines, and whether it marks any line at all."""
        key = (quote, lines)
        found = self._excerpts.get(key)
        if found is None:
            marked = passage_lines(self._document, quote, lines)
            found = self._excerpts[key] = (self._macros.excerpt(marked), bool(marked))
        return found

    def _reviewer_of(self, engine_answer: Any, finding_id: str) -> str | None:
        """EngineAnswer.reviewer_of from one index per answer instead of a scan per finding."""
        known = self._reviewers.get(id(engine_answer))
        if known is None:
            names: dict[str, str] = {}
            for reviewer in engine_answer.reviewers:
                for finding in reviewer.findings:
                    names.setdefault(finding.id, reviewer.id)
            known = self._reviewers[id(engine_answer)] = (engine_answer, names)  # the answer kept, so its id stays its own
        return known[1].get(finding_id)


def case_path(case_version: str, run: str | None = None) -> str:
    """Where a case version's page (or its page for one run) lives below a language folder; sharded by the id's first two characters."""
    return f"cases/{case_version[:2]}/{case_version}/{run + '.html' if run else 'index.html'}"


def repetition_anchor(repetition: str | int, stage: str | None = None) -> str:
    """The anchor of a repetition (and stage) on a case's run page; a span of repetitions points at its first."""
    first = str(repetition).split("-", 1)[0]
    return f"r{first}-{stage}" if stage else f"r{first}"


# --- facts shared by the overview and run pages -------------------------------


@dataclass(frozen=True)
class ChangeMark:
    kind: str  # scorer | suite
    value: str
    anchor: str


@dataclass(frozen=True)
class RunView:
    run: Run
    result: RunResult | None  # on the overview, its headline only (see _headline); the run page gets the whole result
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


def _site_facts(records: Records, headlines: Mapping[str, RunResult], published: tuple[Run, ...], changelog: Changelog | None) -> SiteFacts:
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


def _headline(result: RunResult) -> RunResult:
    """A run's outcome and measures without its case results and observations: all the overview and charts need."""
    return replace(result, cases=(), observations=())


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


def _run_summaries(results: Mapping[str, RunResult], published: tuple[Run, ...]):
    """Per run, its headline (_headline) and its state per (case version, repetition): all the overview and the case
    pages need of every run, small enough to keep, read with each run's results unpacked once."""
    headlines: dict[str, RunResult] = {}
    states: dict[str, Mapping[tuple[str, int], str]] = {}
    for run in published:
        result = results.get(run.id)
        if result is not None:
            headlines[run.id] = _headline(result)
        states[run.id] = {(c.case_version, c.repetition): c.state for c in result.cases} if result is not None else {}
    return headlines, states


def _index_cases(result: RunResult | None) -> Mapping[tuple[str, int], CaseResult]:
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


def _runs_by_case(records: Records, published: tuple[Run, ...]) -> Mapping[str, tuple[Run, ...]]:
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


@dataclass(frozen=True)
class ListPage:
    path: str
    first: int  # 1-based, inclusive
    last: int


@dataclass(frozen=True)
class Listing:
    """A list on a run page: the first items shown there, all of them on continuation pages when there are more."""

    run: Run
    kind: str  # observations | regressions | grid
    measure: str | None
    items: tuple
    crashed_run: bool = False

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
    def pages(self) -> tuple[ListPage, ...]:
        if self.total <= self.limit:
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


def run_listings(run: Run, result: RunResult | None, grid, comparison: Any) -> RunListings:
    """Split a run's long lists so its page shows the first items and continuation pages hold the rest."""
    observations = result.observations if result is not None else ()
    groups = tuple(
        Listing(run, "observations", measure, tuple(o for o in observations if o.measure == measure))
        for measure in MEASURES
        if any(o.measure == measure for o in observations)
    )
    regressions = Listing(run, "regressions", None, tuple(comparison.regressions)) if comparison is not None else None
    crashed = result is not None and result.outcome == CRASHED_STATE
    return RunListings(groups, regressions, Listing(run, "grid", None, tuple(grid), crashed_run=crashed))


def _run_grid(records: Records, run: Run, result: RunResult | None) -> tuple[tuple[str, tuple[GridCell, ...]], ...]:
    """Rows of (case version, its cells per repetition) in the suite's order."""
    try:
        versions = records.suite(run.suite, run.suite_version).case_versions
    except KeyError:
        versions = ()
    index = _index_cases(result)
    reps = range(1, run.repetitions + 1)
    rows = []
    for cv in versions:
        cells = []
        for rep in reps:
            answer = records.answers.get((run.id, cv, rep))
            crashed = answer is not None and (answer.answer.status == CRASHED or (answer.rerun is not None and answer.rerun.status == CRASHED))
            found = index.get((cv, rep))
            cells.append(GridCell(rep, found.state if found is not None else None, answer is not None, crashed))
        rows.append((cv, tuple(cells)))
    return tuple(rows)


@dataclass(frozen=True)
class GridCell:
    repetition: int
    state: str | None  # None: no result for it
    answered: bool
    crashed: bool  # the answer or its rerun crashed


# --- case pages ------------------------------------------------------------------


CASE_CHUNK = 16  # case versions per task sent to a worker: large enough to amortise, small enough to stream
RUN_TASK_PARTS = 8  # a large run's own pages (thousands of list pages) split over tasks, so no worker waits on one


@dataclass(frozen=True)
class _PageJob:
    """What rendering a run's pages and case version pages needs; a forked worker inherits it once."""

    records: Records
    results: Mapping[str, RunResult]
    verdicts: Verdicts
    renderers: Mapping[str, "Renderer"]
    languages: tuple[str, ...]
    runs_by_case: Mapping[str, tuple[Run, ...]]
    states: Mapping[str, Mapping[tuple[str, int], str]]  # run -> (case version, repetition) -> state
    outcomes: Mapping[str, str | None]
    common: Mapping[str, Any]  # what every page shows: site facts, downloads, changelog
    comparisons: Mapping[str, Any]
    write: Callable[[Page], Any] | None
    pairs: Mapping[str, tuple[tuple[Pair, str], ...]]  # pairs_by_case
    _current: dict = field(default_factory=dict)  # per process: the run at hand's case results and own-page inputs, made once

    def render_task(self, task: tuple[str, str | None, Sequence]) -> list[Any]:
        """The task's pages, or with `write` what writing each of them returned."""
        pages = self.render(task)
        return pages if self.write is None else [self.write(page) for page in pages]

    def render(self, task: tuple[str, str | None, Sequence]) -> list[Page]:
        """A run's own pages, the case pages of some case versions, or their pages for one run; in every language."""
        kind, run_id, items = task
        if kind == "run":
            (part,) = items
            return self.render_run(run_id, part)
        pages = []
        case_ids = items
        if kind == "case":
            for cv_id in case_ids:
                bundle = collect_case(self.records, cv_id, self.runs_by_case.get(cv_id, ()), self.states, self.outcomes, verdicts=None,
                                      pairs=self.pairs.get(cv_id, ()))
                pages.extend(render_case_page(self.renderers[lang], bundle) for lang in self.languages)
            return pages
        if self._current.get("cases", (None,))[0] != run_id:
            result = self.results.get(run_id)
            self._current["cases"] = (run_id, {run_id: _index_cases(result)}, {run_id: index_observations(self.records, result)})
        found, observed = self._current["cases"][1:]
        for cv_id in case_ids:
            run = next(r for r in self.runs_by_case[cv_id] if r.id == run_id)
            bundle = collect_case(self.records, cv_id, (run,), self.states, self.outcomes, verdicts=self.verdicts,
                                  case_results=found, pairs=self.pairs.get(cv_id, ()), observations=observed)
            pages.extend(page for lang in self.languages for page in render_case_runs(self.renderers[lang], bundle))
        return pages

    def render_run(self, run_id: str, part: int) -> list[Page]:
        """One of RUN_TASK_PARTS slices of a run's own pages (its page and the continuation pages of its long lists)."""
        run, view, listings, comparison = self._run_pages(run_id)
        work = [(lang, listing, page) for lang in self.languages
                for listing, page in ((None, None), *((x, p) for x in listings.all() for p in x.pages))]
        pages = []
        for lang, listing, page in work[len(work) * part // RUN_TASK_PARTS : len(work) * (part + 1) // RUN_TASK_PARTS]:
            renderer = self.renderers[lang]
            if listing is None:
                pages.append(renderer.page("run.html.j2", f"runs/{run.id}.html",
                                           {**self.common, "run_view": view, "listings": listings, "comparison": comparison}))
            else:
                items = listing.items[page.first - 1 : page.last]
                pages.append(renderer.page("run_list.html.j2", page.path, {**self.common, "listing": listing, "page": page, "items": items}))
        return pages

    def _run_pages(self, run_id: str):
        """What every slice of a run's own pages shows, worked out once per process for the run at hand."""
        if self._current.get("run", (None,))[0] != run_id:
            run = next(r for r in self.records.published_runs if r.id == run_id)
            result = self.results.get(run.id)
            comparison = self.comparisons.get(run.id)
            listings = run_listings(run, result, _run_grid(self.records, run, result), comparison)
            view = replace(self.common["site"].run_views[run.id], result=result)
            self._current["run"] = (run_id, (run, view, listings, comparison))
        return self._current["run"][1]


_WORKER_JOB: list[_PageJob] = []  # set once in each forked worker process, never in the parent


def _start_page_worker(job: _PageJob) -> None:
    _WORKER_JOB.append(job)


def _render_task(task: tuple[str, str | None, Sequence]) -> list[Any]:
    return _WORKER_JOB[0].render_task(task)


def collect_case(
    records: Records,
    cv_id: str,
    runs: Iterable[Run],
    states: Mapping[str, Mapping[tuple[str, int], str]],
    outcomes: Mapping[str, str | None],
    *,
    verdicts: Verdicts | None,
    case_results: Mapping[str, Mapping[tuple[str, int], CaseResult]] | None = None,
    pairs: tuple[tuple[Pair, str], ...] | None = None,
    observations: Mapping[str, Mapping[tuple[str, int], tuple[Observation, ...]]] | None = None,
) -> CaseInput:
    """Gather one case version's answers and verdicts, so its pages render in both languages from one computation.

    Without `verdicts` only the states are gathered: enough for the case page itself, and no answer is read.
    `pairs` are the case version's entry of pairs_by_case, when the caller has made that index; `observations`
    each run's index_observations, for the pages of the runs given.
    """
    cv = records.case_versions[cv_id]
    if pairs is None:
        pairs = pairs_by_case(records).get(cv_id, ())
    run_inputs = []
    for run in runs:
        stages = records.stages(run)
        run_states = states.get(run.id, {})
        found = case_results.get(run.id, {}) if case_results is not None else {}
        observed = observations.get(run.id, {}) if observations is not None else {}
        reps = []
        for rep in range(1, run.repetitions + 1):
            answer = records.answers.get((run.id, cv_id, rep)) if verdicts is not None else None
            stage_verdicts: tuple[tuple[str, StageVerdict], ...] = ()
            rerun_verdicts: tuple[tuple[str, StageVerdict], ...] = ()
            # a CRASHED run says nothing about quality: its answers are shown, never judged
            if answer is not None and answer.answer.status != CRASHED and outcomes.get(run.id) != CRASHED_STATE:
                stage_verdicts = tuple((stage, verdicts(answer, stage, False)) for stage in stages)
                if answer.rerun is not None and answer.rerun.status != CRASHED:
                    rerun_verdicts = tuple((stage, verdicts(answer, stage, True)) for stage in stages)
            reps.append(RepetitionInput(rep, run_states.get((cv_id, rep)), found.get((cv_id, rep)), answer, stage_verdicts, rerun_verdicts,
                                        observed.get((cv_id, rep), ())))
        run_inputs.append(CaseRunInput(run, stages, outcomes.get(run.id), tuple(reps)))
    return CaseInput(cv, pairs, tuple(run_inputs))


def pairs_by_case(records: Records) -> Mapping[str, tuple[tuple[Pair, str], ...]]:
    """Each case version's pairs with the twin version, in pair order: made once, not searched for on every page."""
    found: dict[str, list[tuple[Pair, str]]] = {}
    for pair in records.pairs:
        first, second = pair.versions
        found.setdefault(first, []).append((pair, second))
        if second != first:
            found.setdefault(second, []).append((pair, first))
    return {cv_id: tuple(entries) for cv_id, entries in found.items()}


def render_case(renderer: Renderer, bundle: CaseInput) -> list[Page]:
    """Render one case version's page and its page per run in one language."""
    return [render_case_page(renderer, bundle), *render_case_runs(renderer, bundle)]


def render_case_page(renderer: Renderer, bundle: CaseInput) -> Page:
    """The case version's own page: document, rules, key, pairs and the grid of outcomes (states only)."""
    cv = bundle.case_version
    return renderer.page("case.html.j2", case_path(cv.id), {"cv": cv, "bundle": bundle})


def render_case_runs(renderer: Renderer, bundle: CaseInput) -> list[Page]:
    """The case version's page for each run in the bundle: the engine's findings against the key."""
    cv = bundle.case_version
    rows = CaseRows(renderer.case_rows, cv.document)
    return [renderer.page("case_run.html.j2", case_path(cv.id, run_input.run.id), {"cv": cv, "item": run_input, "rows": rows})
            for run_input in bundle.runs]


@lru_cache(maxsize=8192)
def passage_lines(document: str, quote: str | None, lines: tuple[int, int] | None) -> tuple[MarkedLine, ...]:
    """The document lines a quote (or else a line span) covers, with the covered part marked.

    Remembered: one case's passages and quotes recur in every run, repetition, stage and language.
    """
    all_lines = document.split("\n")
    if quote is not None:
        span = _locate(document, quote, lines)
        if span is not None:
            return _mark(all_lines, *span)
    if lines is None:
        return ()
    first, last = max(lines[0], 1), min(lines[1], len(all_lines))
    return tuple(MarkedLine(n, "", all_lines[n - 1], "") for n in range(first, last + 1))


# What a collapsed space in a quote stands for: any run of these (METHOD.md).
_SPACE = " \t\r\n"
_SPACE_RUN = re.compile(r"[ \t\r\n]+")


def _locate(document: str, quote: str, lines: tuple[int, int] | None) -> tuple[int, int] | None:
    """Offsets of the quote in the original document, matching any whitespace run for a collapsed space (METHOD.md)."""
    parts = _SPACE_RUN.split(quote)
    if not "".join(parts):
        return None
    start = 0
    if lines is not None and lines[0] > 1:
        # prefer the occurrence inside the given lines
        start = sum(len(line) + 1 for line in document.split("\n")[: lines[0] - 1])
    return _search(document, parts, start) or _search(document, parts, 0)


def _search(document: str, parts: list[str], start: int) -> tuple[int, int] | None:
    """The leftmost match from `start` of the parts joined by whitespace runs, the match a regex of them would find.

    A scan instead of a regex compiled per quote, which cost more than the rest of an excerpt. No backtracking is
    needed: parts hold no whitespace, so a run between two parts is always taken whole.
    """
    first = parts[0]
    at = start
    while True:
        if first:
            at = document.find(first, at)
            if at < 0:
                return None
            end = _match_rest(document, parts, at + len(first))
            if end is not None:
                return at, end
            at += 1
        else:
            run = _SPACE_RUN.search(document, at)
            if run is None:
                return None
            end = _match_rest(document, parts, run.start())
            if end is not None:
                return run.start(), end
            at = run.end()  # any later start inside this run ends where it does, and fails the same way


def _match_rest(document: str, parts: list[str], at: int) -> int | None:
    """Where parts[1:] end when each follows a whitespace run starting at `at`, or None if they don't."""
    size = len(document)
    for part in parts[1:]:
        after = at
        while after < size and document[after] in _SPACE:
            after += 1
        if after == at or not document.startswith(part, after):
            return None
        at = after + len(part)
    return at


def _mark(all_lines: list[str], start: int, end: int) -> tuple[MarkedLine, ...]:
    out = []
    offset = 0
    for number, text in enumerate(all_lines, start=1):
        line_end = offset + len(text)
        if line_end >= start and offset < end:
            a = max(start, offset) - offset
            b = min(end, line_end) - offset
            out.append(MarkedLine(number, text[:a], text[a:b], text[b:]))
        if offset >= end:
            break
        offset = line_end + 1
    return tuple(out)


# --- prose -----------------------------------------------------------------------


@dataclass(frozen=True)
class Prose:
    """A Markdown file of prose: its first-line heading and its body as HTML."""

    heading: str
    html: str


def load_content(content_dir: Path, lang: str) -> Mapping[str, Prose]:
    """Read and render one language's prose files; a missing file is named, not skipped."""
    names = ("method-intro", *SECTIONS, *(f"measure-{m}" for m in MEASURES))
    content = {}
    missing = []
    for name in names:
        path = content_dir / lang / f"{name}.md"
        if not path.is_file():
            missing.append(Diagnostic(str(path), None, None, None, "prose file is missing", "content.missing"))
            continue
        # a page of its own keeps its "##" sections at h2; the method page's prose sits under its own h2s
        content[name.replace("-", "_")] = render_prose(path.read_text(encoding="utf-8"), 0 if name in PAGE_PROSE else 1)
    if missing:
        raise PublicationError(missing)
    return content


def render_prose(text: str, shift_headings: int = 1) -> Prose:
    """Split off the "# heading" line and render the rest, raw HTML escaped and headings one level down (a section's)."""
    heading = ""
    lines = text.split("\n")
    if lines and lines[0].startswith("# "):
        heading, text = lines[0][2:].strip(), "\n".join(lines[1:])
    return Prose(heading, str(render_markdown(text, extensions=("tables", "def_list"), shift_headings=shift_headings)))


# --- sitemap -----------------------------------------------------------------------


def render_sitemap(paths: Iterable[str], *, base_url: str, build_date: str) -> list[Page]:
    """Absolute URLs of every HTML page but the 404; split into parts under an index past the protocol's limit."""
    urls = sorted(p for p in paths if p.endswith(".html") and p != "404.html")
    lastmod = f"<lastmod>{escape(build_date)}</lastmod>" if build_date else ""

    def urlset(chunk: Sequence[str]) -> bytes:
        body = "".join(f"<url><loc>{escape(base_url + u)}</loc>{lastmod}</url>\n" for u in chunk)
        return ('<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + body + "</urlset>\n").encode("utf-8")

    if len(urls) <= SITEMAP_LIMIT:
        return [Page("sitemap.xml", urlset(urls))]
    parts = [urls[i : i + SITEMAP_LIMIT] for i in range(0, len(urls), SITEMAP_LIMIT)]
    out = [Page(f"sitemap-{n}.xml", urlset(chunk)) for n, chunk in enumerate(parts, start=1)]
    index = "".join(f"<sitemap><loc>{escape(base_url + p.path)}</loc>{lastmod}</sitemap>\n" for p in out)
    out.append(Page("sitemap.xml", ('<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n' + index + "</sitemapindex>\n").encode("utf-8")))
    return out
