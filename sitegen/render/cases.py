"""A case version's pages: its answers and verdicts gathered once, rendered per language, with quotes and passages marked."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Callable, Iterable, Mapping

from markupsafe import Markup

from sitegen.core.model import (
    CRASHED,
    CRASHED_STATE,
    DISMISSED,
    PENDING,
    Answer,
    CaseResult,
    CaseVersion,
    EngineAnswer,
    Observation,
    Pair,
    Records,
    Run,
    StageVerdict,
)
from sitegen.render.environment import Page, Renderer, case_path, repetition_anchor
from sitegen.render.passages import passage_lines
from sitegen.render.shown import repeated, shown_before
from sitegen.render.templating import escape_output
from sitegen.score.measures.base import Reason
from sitegen.score.measures.registry import MEASURES, stage_of
from sitegen.score.reasons import ReasonSource

Verdicts = Callable[[Answer, str, bool], StageVerdict]


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
    # the structured reason of each of those observations (score/reasons.py), which the page words in its language
    reasons: Mapping[Observation, Reason] = field(default_factory=dict)
    # an earlier repetition whose answer (and rerun) the engine repeated exactly, judged alike: its tables are not repeated
    same_as: int | None = None
    # (section id, finding id) -> (row id, finding id, judged alike, repetition) of an earlier finding on the page with the
    # same kind, rules, flag, evidence and wording, which the row then links to instead of repeating them, whether that
    # row's verdict is this one's too, so the row need not give it either, and that row's repetition when it is another
    # one's (None in the same repetition), which the link names: the same finding id is mostly in every repetition (shown_before)
    earlier: Mapping[tuple[str, str], tuple[str, str, bool, int | None]] = field(default_factory=dict)
    # (section id, finding id) -> (row id, finding id, repetition) of an earlier row showing the same excerpt, linked
    # instead, its repetition named as in `earlier` (shown_before)
    quoted: Mapping[tuple[str, str], tuple[str, str, int | None]] = field(default_factory=dict)

    @cached_property
    def reviewers(self) -> Mapping[str, str]:
        """Which reviewer gave each finding of the answer (the first, as EngineAnswer.reviewer_of): one index per answer."""
        return _reviewers(self.answer.answer if self.answer is not None else None)

    @cached_property
    def rerun_reviewers(self) -> Mapping[str, str]:
        """The same for the rerun's answer."""
        return _reviewers(self.answer.rerun if self.answer is not None else None)

    @cached_property
    def listed(self) -> tuple[tuple[Observation, tuple[tuple[str, str], ...], bool, str | None, Reason | None], ...]:
        """Each observation as the page lists it, worked out here rather than by template calls per observation:
        (observation, the (section id, stage) of this repetition it is about, whether it names another repetition too
        (a pair's), the repetition it is explained under when that is another (a pair's first), its structured reason if
        known where it is explained here).

        Observations that differ only in their stage, with the same result, measure, repetitions, subject and reason, are
        listed once naming each stage: a stability difference is mostly found in the reviewers' answer and in the report.
        An observation of every stage at once (an invariance pair's, ACROSS_STAGES) is about no one section: it names none.
        Where they are explained under another repetition, their reasons need not be the same: this one only links there.
        """
        mine = str(self.repetition)
        out: list[list] = []
        for o in self.observations:
            first = o.repetition.split("-", 1)[0]
            under = None if first == mine else first
            reason = self.reasons.get(o)
            stage = stage_of(o.measure, o.stage)
            sections = [] if stage is None else [(repetition_anchor(self.repetition, stage), stage)]
            # alike as the repetition explaining it sees them, so each repetition lists the observation the same way
            # one explained under another repetition is only linked there, so its reason does not set it apart
            same = (o.result, o.measure, o.repetition, o.subject, under) + ((reason, o.detail if reason is None else None) if under is None else (None, None))
            for entry in out:
                if sections and entry[5] == same and all(shown != stage for _, shown in entry[1]):
                    entry[1].extend(sections)
                    break
            else:
                out.append([o, sections, o.repetition != mine, under, reason if under is None else None, same])
        return tuple((o, tuple(sections), pair, under, why) for o, sections, pair, under, why, _ in out)

    @cached_property
    def sections(self) -> tuple[tuple[str, StageVerdict, str], ...]:
        """(stage, verdict, section id) of the answer's judged stages, in the page's order."""
        return tuple((stage, verdict, repetition_anchor(self.repetition, stage)) for stage, verdict in self.verdicts)

    @cached_property
    def marks(self) -> Mapping[tuple[str, str], str]:
        """GROUNDING's result for each (stage, expected finding) missed at first: pending, failed (confirmed) or dismissed."""
        return {(o.stage, o.subject): o.result for o in self.observations if o.measure == "GROUNDING"}


def _reviewers(engine_answer: EngineAnswer | None) -> Mapping[str, str]:
    names: dict[str, str] = {}
    for reviewer in engine_answer.reviewers if engine_answer is not None else ():
        for finding in reviewer.findings:
            names.setdefault(finding.id, reviewer.id)
    return names


@dataclass(frozen=True)
class CaseRunInput:
    run: Run
    stages: tuple[str, ...]
    outcome: str | None
    repetitions: tuple[RepetitionInput, ...]

    @cached_property
    def counts(self) -> tuple[tuple[int, ...], tuple[tuple[str, tuple[tuple[int, int, int, int] | None, ...]], ...]]:
        """The passed-of-observed counts as one table of the page: (the repetitions with a result, then each measure
        any of them observed, in METHOD.md's order, with its (passed, observed, pending, dismissed) per repetition, or
        None where that repetition has no count of it). Empty when no repetition has a result.

        Pending and dismissed are counted as the run page's table of measures counts them (MeasureResult): observations
        by their result, here those of the repetition (RepetitionInput.observations, a pair's in both of its slots, as
        the case's own counts take it). A pending one is among the not passed, a dismissed one among the passed, so a
        cell says which of its numbers are neither plain failures nor plain passes."""
        reps = [rep for rep in self.repetitions if rep.result is not None]
        if not reps:
            return ((), ())
        results = [Counter((o.measure, o.result) for o in rep.observations) for rep in reps]

        def cell(rep: RepetitionInput, found: Counter, measure: str) -> tuple[int, int, int, int] | None:
            counted = rep.result.measures.get(measure)
            return None if counted is None else (*counted, found[(measure, PENDING)], found[(measure, DISMISSED)])

        rows = tuple((measure, tuple(cell(rep, found, measure) for rep, found in zip(reps, results)))
                     for measure in MEASURES if any(measure in rep.result.measures for rep in reps))
        return (tuple(rep.repetition for rep in reps), rows)


@dataclass(frozen=True)
class CaseInput:
    """Everything one case version's pages need, picklable, so case pages could be rendered in other processes."""

    case_version: CaseVersion
    pairs: tuple[tuple[Pair, str], ...]  # (pair, the other version's id)
    runs: tuple[CaseRunInput, ...]  # published runs whose suite holds this version, newest first


_SECTION = Markup("<§>")  # stands in for a section id while a row is rendered: see CaseRows.expected


class CaseRows:
    """One case version's verdict rows and excerpts in one language, each rendered once: runs, repetitions and stages repeat them.

    render_case makes one per case and language, so nothing is kept beyond the case's own pages.
    """

    def __init__(self, macros: Any, document: str, words: Any):
        self._macros = macros
        self._document = document
        self._words = words
        self._excerpts: dict[tuple, tuple[Any, tuple[int, int] | None, bool]] = {}
        self._expected: dict[tuple, tuple[str, ...]] = {}
        self._findings: dict[tuple, Any] = {}
        self._again: dict[tuple, Any] = {}
        self._alike: dict[tuple, Any] = {}

    def tables(self, verdict: StageVerdict, stage: str, section_id: str, reviewers: Mapping[str, str],
               marks: Mapping[tuple[str, str], str], earlier: Mapping[tuple[str, str], tuple[str, str, bool, int | None]],
               quoted: Mapping[tuple[str, str], tuple[str, str, int | None]]) -> Markup:
        """A stage's verdicts against the key, joined here from their remembered rows (a loop in the template cost several
        template calls per row, on the build's most numerous pages): how many expected findings were matched, in one line
        (each matched finding's row names the expected finding and the evidence); a table of those missed, with why; the findings,
        in a table, or in a list where each is judged and worded as an earlier row of the page."""
        out: list[str] = []
        matched = [e for e in verdict.expected if e.finding is not None]
        if matched:
            out += ('<p class="matched">', self._words.matched_lead[(len(matched), len(verdict.expected))], "</p>\n")
        missed = [e for e in verdict.expected if e.finding is None]
        if missed:
            out += (self._words.expected_open[section_id], "\n")
            for e in missed:
                out += (self.expected(section_id, e, marks.get((stage, e.expected.id))), "\n")
            out.append("</tbody>\n</table>\n")
        if verdict.findings:
            section = escape_output(section_id)
            targets = [earlier.get((section_id, v.finding.id)) for v in verdict.findings]
            if all(target is not None and target[2] for target in targets):
                # every finding judged and worded as one above (mostly a report repeating its reviewers): a list, no table
                out += (self._words.alike_open, "\n")
                for v, target in zip(verdict.findings, targets):
                    out += (f'<li id="{section}-f-{escape_output(v.finding.id)}">', self.finding_alike(v, stage, reviewers, target), "\n")
                out.append("</ul>\n")
                return Markup("".join(out))
            out += (self._words.findings_open[(section_id, stage)], "\n")
            for v, target in zip(verdict.findings, targets):
                out.append(f'<tr id="{section}-f-{escape_output(v.finding.id)}">')
                out.append(self.finding_again(v, stage, reviewers, target) if target
                           else self.finding(v, stage, reviewers, quoted.get((section_id, v.finding.id))))
            out.append("</tbody>\n</table>\n")
        return Markup("".join(out))

    def expected(self, section_id: str, verdict: Any, mark: str | None = None) -> Any:
        """An expected finding's row in a stage's section: rendered once per verdict, the section's id put in after.

        The passage is linked, not repeated: the case page shows it once, in the document and in the key.

        The row names its section in its id and its links. It is rendered with a stand-in for the section id that no
        rendered text can contain (a bare "<" is always escaped, and the templates never write "<§"), then split there.
        """
        return _in_section(self._expected, (verdict, mark), section_id, lambda: self._macros.expected_row(verdict, _SECTION, mark))

    def finding(self, verdict: Any, stage: str, reviewers: Mapping[str, str], quoted: tuple[str, str, int | None] | None = None) -> Any:
        """A finding's row after its opening tag, which is the only part that names the section.

        `reviewers` are the repetition's RepetitionInput.reviewers (or rerun_reviewers): who gave each finding. `quoted`:
        the row (id, finding id, repetition if another) that shows the same excerpt earlier on the page, linked instead of
        showing it again.
        """
        finding = verdict.finding
        who = reviewers.get(finding.id) if stage == "reviewer" else None
        key = (verdict, stage, who, quoted)
        found = self._findings.get(key)
        if found is None:
            excerpt, lines, verbatim = self._excerpt(finding.quote, finding.location)
            found = self._findings[key] = self._macros.finding_cells(verdict, stage, who, excerpt if lines else "", verbatim,
                                                                     quoted + (lines,) if quoted and lines else None)
        return found

    def finding_again(self, verdict: Any, stage: str, reviewers: Mapping[str, str],
                      target: tuple[str, str, bool, int | None]) -> Any:
        """A finding's row (after its opening tag) whose content an earlier row on the page shows (`target`: that row's id,
        finding id, whether its verdict is this one's, and its repetition if another): its verdict, unless the same, and a
        link there."""
        finding = verdict.finding
        who = reviewers.get(finding.id) if stage == "reviewer" else None
        key = (verdict, stage, who, target)
        found = self._again.get(key)
        if found is None:
            found = self._again[key] = self._macros.finding_again(verdict, stage, who, *target)
        return found

    def finding_alike(self, verdict: Any, stage: str, reviewers: Mapping[str, str],
                      target: tuple[str, str, bool, int | None]) -> Any:
        """A finding's list item (after its opening tag) in a stage whose every finding an earlier row shows, judged alike."""
        who = reviewers.get(verdict.finding.id) if stage == "reviewer" else None
        key = (verdict.finding, stage, who, target)
        found = self._alike.get(key)
        if found is None:
            found = self._alike[key] = self._macros.finding_alike(verdict.finding, stage, who, target[0], target[1], target[3])
        return found

    def _excerpt(self, quote: str | None, lines: tuple[int, int] | None) -> tuple[Any, tuple[int, int] | None, bool]:
        """The rendered excerpt of passage_lines, the first and last line it shows (None: it marks no line at all), and
        whether its mark is the quote itself (one line, the marked text character for character the quote), so the quote
        need not be printed twice."""
        key = (quote, lines)
        found = self._excerpts.get(key)
        if found is None:
            marked = passage_lines(self._document, quote, lines)
            verbatim = quote is not None and len(marked) == 1 and marked[0].marked == quote
            shown = (marked[0].number, marked[-1].number) if marked else None
            found = self._excerpts[key] = (self._macros.excerpt(marked), shown, verbatim)
        return found


def _in_section(memo: dict, key: Any, section_id: str, render: Callable[[], Any]) -> Markup:
    """What `render` makes with _SECTION standing in for a section id, made once per key (kept split at the stand-in in
    `memo`), with `section_id` put in."""
    parts = memo.get(key)
    if parts is None:
        parts = memo[key] = tuple(str(render()).split(_SECTION))
    return Markup(escape_output(section_id).join(parts))


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
    reasons: ReasonSource | None = None,
) -> CaseInput:
    """Gather one case version's answers and verdicts, so its pages render in both languages from one computation.

    Without `verdicts` only the states are gathered: enough for the case page itself, and no answer is read.
    `pairs` are the case version's entry of pairs_by_case, when the caller has made that index; `observations`
    each run's index_observations, for the pages of the runs given; `reasons` gives their structured reasons.
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
            shown = observed.get((cv_id, rep), ())
            why = reasons.reasons(run.id, shown) if reasons is not None and shown else {}
            made = RepetitionInput(rep, run_states.get((cv_id, rep)), found.get((cv_id, rep)), answer, stage_verdicts, rerun_verdicts,
                                   shown, why)
            twin = repeated(made, reps)
            reps.append(made if twin is None else replace(made, same_as=twin))
        run_inputs.append(CaseRunInput(run, stages, outcomes.get(run.id), shown_before(reps, cv.document)))
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
    rows = CaseRows(renderer.case_rows, cv.document, renderer.env.globals["word"])
    return [renderer.page("case_run.html.j2", case_path(cv.id, run_input.run.id), {"cv": cv, "item": run_input, "rows": rows})
            for run_input in bundle.runs]
