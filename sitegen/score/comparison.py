"""Run against run, observation by observation, refusing runs whose numbers do not mean the same thing."""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Collection

from sitegen.core import model as m
from sitegen.core.errors import SitegenError, UsageError, did_you_mean
from sitegen.score.measures.registry import ACROSS_STAGES, MEASURES
from sitegen.score.scoring import observe_run

_GOOD = (m.PASSED, m.DISMISSED)
_BAD = (m.FAILED, m.PENDING)


class IncompatibleRunsError(SitegenError):
    """The two runs were measured differently; comparing their counts would mislead."""

    exit_code = 2

    def __init__(self, run_a: str, run_b: str, differences: tuple[str, ...]):
        self.differences = differences
        super().__init__(f"runs {run_a} and {run_b} are not comparable")

    def lines(self) -> list[str]:
        return [f"error: {self}:"] + [f"  - {d}" for d in self.differences]


@dataclass(frozen=True, slots=True)
class RunDifference:
    """Something that differs between two runs: in how they were measured (suite, scorer, matching_method, assessment,
    stages: see _MEASURED_ALIKE), which makes their counts incomparable, or besides that (setup, report, engine,
    repetitions), which does not. `text` is the command line's wording; a setup is worded only on the pages (the command
    line says it on a line of its own, format_comparison)."""

    what: str
    before: object
    after: object

    def text(self) -> str:
        if self.what == "report":
            return "report: version {} (runner {}, run record {}) vs version {} (runner {}, run record {})".format(*self.before, *self.after)
        if self.what == "suite":
            return "suite: {} version {} vs {} version {}".format(*self.before, *self.after)
        if self.what == "assessment":
            return "assessment: version {} under {} vs version {} under {}".format(*self.before, *self.after)
        if self.what == "stages":
            return f"stages: {len(self.before)} ({', '.join(self.before)}) vs {len(self.after)} ({', '.join(self.after)})"
        label = {"scorer": "scorer version", "matching_method": "matching method"}.get(self.what, self.what)
        return f"{label}: {self.before} vs {self.after}"


# What two runs must share for their counts to be compared observation by observation (METHOD.md: "runs are compared
# only when their configurations are compatible"): the one list that both the site's pass (compatibility_key, through
# score/verify.py) and `sitegen compare` (incompatibilities) read, and the run pages word (NoComparison).
_MEASURED_ALIKE: tuple[tuple[str, Callable[[m.Records, m.Run], object]], ...] = (
    ("suite", lambda records, run: (run.suite, run.suite_version)),
    ("scorer", lambda records, run: run.scorer_version),
    ("matching_method", lambda records, run: run.matching_method),
    ("assessment", lambda records, run: (run.assessment_version, run.policy)),
    ("stages", lambda records, run: records.stages(run)),
)


@dataclass(frozen=True, slots=True)
class MeasureDelta:
    measure: str
    before: tuple[int, int] | None  # (passed, observed), None when not observed
    after: tuple[int, int] | None


@dataclass(frozen=True, slots=True)
class Change:
    measure: str
    case_version: str
    repetition: str
    stage: str  # "" for an observation of every stage at once (ACROSS_STAGES): "stage": null in JSON
    subject: str
    before: str
    after: str

    @property
    def regression(self) -> bool:
        """Worse than before: a failure or pending miss where there was none (a new failed quote counts too)."""
        return self.after in _BAD and self.before not in _BAD


@dataclass(frozen=True, slots=True)
class Comparison:
    run_a: str
    run_b: str
    setup_a: str
    setup_b: str
    fingerprint_a: str
    fingerprint_b: str
    measures: tuple[MeasureDelta, ...]
    changes: tuple[Change, ...]  # regressions first
    notes: tuple[RunDifference, ...] = ()  # what else differs between the runs without making them incomparable

    @property
    def setup_changed(self) -> bool:
        return self.fingerprint_a != self.fingerprint_b

    @property
    def also(self) -> tuple[RunDifference, ...]:
        """Everything that differs without making the counts incomparable, the setup first: what a run page lists."""
        return _setup_difference(self.setup_a, self.fingerprint_a, self.setup_b, self.fingerprint_b) + self.notes

    @property
    def regressions(self) -> tuple[Change, ...]:
        return tuple(c for c in self.changes if c.regression)

    def regressions_only(self) -> "Comparison":
        """The same comparison keeping only its regressions (all a run page shows): a large run has many other changes."""
        return replace(self, changes=self.regressions)

    def to_json(self) -> dict:
        return {
            "runs": [self.run_a, self.run_b],
            "setups": [{"id": self.setup_a, "fingerprint": self.fingerprint_a}, {"id": self.setup_b, "fingerprint": self.fingerprint_b}],
            "setup_changed": self.setup_changed,
            "other_differences": [{"what": d.what, "before": d.before, "after": d.after} for d in self.notes],
            "measures": [{"measure": d.measure, "before": list(d.before) if d.before else None,
                          "after": list(d.after) if d.after else None} for d in self.measures],
            "changes": [{"measure": c.measure, "case_version": c.case_version, "repetition": c.repetition, "stage": c.stage or None,
                         "subject": c.subject, "before": c.before, "after": c.after, "regression": c.regression} for c in self.changes],
        }


def measured_differently(records: m.Records, a: m.Run, b: m.Run) -> tuple[RunDifference, ...]:
    """What in how two runs were measured keeps their counts apart; empty when they can be compared (if neither crashed)."""
    found = []
    for what, of in _MEASURED_ALIKE:
        before, after = of(records, a), of(records, b)
        if before != after:
            found.append(RunDifference(what, before, after))
    return tuple(found)


def incompatibilities(records: m.Records, a: m.Run, b: m.Run) -> tuple[str, ...]:
    """Every reason the counts of two runs cannot be compared; empty when they can."""
    found = [d.text() for d in measured_differently(records, a, b)]
    for run in (a, b):
        if run.status != m.COMPLETED:
            found.append(f"run {run.id} crashed: it has no numbers to compare")
    return tuple(found)


def allowed_differences(a: m.Run, b: m.Run) -> tuple[RunDifference, ...]:
    """What differs between two comparable runs besides the setup: said next to the counts, since it may explain them."""
    found = []
    report_a = (a.report_version, a.runner_version, a.run_record_version)
    report_b = (b.report_version, b.runner_version, b.run_record_version)
    if report_a != report_b:
        found.append(RunDifference("report", report_a, report_b))
    if a.engine_version != b.engine_version:
        found.append(RunDifference("engine", a.engine_version, b.engine_version))
    if a.repetitions != b.repetitions:
        found.append(RunDifference("repetitions", a.repetitions, b.repetitions))
    return tuple(found)


def _setup_difference(setup_a: str, fingerprint_a: str, setup_b: str, fingerprint_b: str) -> tuple[RunDifference, ...]:
    # a setup is the engine's configuration: part of what is measured, not of how; its merge setting counts as the stages
    if fingerprint_a == fingerprint_b:
        return ()
    return (RunDifference("setup", (setup_a, fingerprint_a), (setup_b, fingerprint_b)),)


@dataclass(frozen=True, slots=True)
class NoComparison:
    """Why the site compares a run with no earlier run, for its page: the run has no counts (crashed), no earlier published
    run has any (first: there is no earlier published run at all), or the latest earlier run with counts was measured
    differently (differences), besides what differs without making counts incomparable (also: the setup first, as in
    Comparison.also, unless the stages differ, which its merge setting decides)."""

    crashed: bool = False
    first: bool = False
    earlier: str | None = None
    differences: tuple[RunDifference, ...] = ()
    also: tuple[RunDifference, ...] = ()


def why_not_compared(records: m.Records, run: m.Run, counted: Collection[str]) -> NoComparison | None:
    """Why a published run has no previous comparable run, given the published runs with counts (those not CRASHED: the
    site compares only them, score/verify.py); None when the latest earlier one with counts is comparable after all."""
    if run.id not in counted:
        return NoComparison(crashed=True)
    before = [r for r in records.published_runs if (r.date, r.id) < (run.date, run.id)]
    with_counts = [r for r in before if r.id in counted]
    if not with_counts:
        return NoComparison(first=not before)
    latest = max(with_counts, key=lambda r: (r.date, r.id))
    differences = measured_differently(records, latest, run)
    if not differences:
        return None
    also = allowed_differences(latest, run)
    if all(d.what != "stages" for d in differences):  # else the setup's merge setting is what set the stages apart
        setup_a, setup_b = records.setups[latest.setup], records.setups[run.setup]
        also = _setup_difference(latest.setup, setup_a.fingerprint, run.setup, setup_b.fingerprint) + also
    return NoComparison(earlier=latest.id, differences=differences, also=also)


def compare_runs(records: m.Records, run_a: str, run_b: str) -> Comparison:
    """The `compare` command: two named runs, refused when incomparable; the build compares in score/verify's pass."""
    try:
        a, b = records.run(run_a), records.run(run_b)
    except KeyError as exc:
        raise UsageError(f'unknown run "{exc.args[0]}"{did_you_mean(exc.args[0], (r.id for r in records.runs))}') from None
    problems = incompatibilities(records, a, b)
    if problems:
        raise IncompatibleRunsError(run_a, run_b, problems)
    seen_a, seen_b = observe_run(records, run_a), observe_run(records, run_b)
    if seen_a is None or seen_b is None:
        crashed = run_a if seen_a is None else run_b
        raise IncompatibleRunsError(run_a, run_b, (f"run {crashed} is CRASHED (a rerun or answer failed): it has no numbers",))
    return compare_summaries(records, a, b, summarize(seen_a), summarize(seen_b))


def summarize(observed) -> dict[str, tuple[dict, tuple[int, int] | None]]:
    """Per measure, each case version's observations (their identities and results, flat) and the count: all a comparison
    needs of a run.

    Flat, by case version: at 10,000 case versions a run has about 400,000 observations, and a tuple and a dict entry
    for each came to 45 MiB a summary; a flat tuple per case version takes a third of that, and a case version whose
    observations are the very same in both runs (most are) is passed over with one comparison of tuples.
    """
    return {measure: (_flat(items, measure in ACROSS_STAGES), _count(items)) for measure, items in observed.items()}


def merge_summaries(parts: list[dict]) -> dict[str, tuple[dict, tuple[int, int] | None]]:
    """The summary of a run from those of parts of its case versions (score/parts.py): no case version is in two parts,
    so their observations join and the counts add up (None while no part observed the measure)."""
    merged: dict[str, tuple[dict, tuple[int, int] | None]] = {}
    for part in parts:
        for measure, (flat, count) in part.items():
            if measure not in merged:
                merged[measure] = (dict(flat), count)
                continue
            kept, total = merged[measure]
            kept.update(flat)
            if count is not None:
                total = count if total is None else (total[0] + count[0], total[1] + count[1])
            merged[measure] = (kept, total)
    return merged


def compare_summaries(records: m.Records, a: m.Run, b: m.Run, seen_a, seen_b, *, regressions_only: bool = False) -> Comparison:
    """Counts and changed observations of b against a; with regressions_only, the other changes are never built."""
    deltas = []
    changes = []
    for measure in MEASURES:
        before, count_before = seen_a[measure]
        after, count_after = seen_b[measure]
        deltas.append(MeasureDelta(measure, count_before, count_after))
        for case_version in before.keys() | after.keys():
            flat_before, flat_after = before.get(case_version, ()), after.get(case_version, ())
            if flat_before == flat_after:
                continue
            was, now = _index(case_version, flat_before), _index(case_version, flat_after)
            for key in _changed(was, now):
                change = Change(measure, *key, before=was.get(key, "not observed"), after=now.get(key, "not observed"))
                if change.regression or not regressions_only:
                    changes.append(change)
    order = {name: i for i, name in enumerate(MEASURES)}
    changes.sort(key=lambda c: (not c.regression, order[c.measure], c.case_version, _sort_key((c.case_version, c.repetition, c.stage, c.subject))))
    return Comparison(a.id, b.id, a.setup, b.setup, records.setups[a.setup].fingerprint, records.setups[b.setup].fingerprint,
                      tuple(deltas), tuple(changes), allowed_differences(a, b))


def _changed(before: dict, after: dict) -> list:
    """The observations whose result moved between good, failed, pending and not observed.

    Most observations keep their result: the set differences of the items (in C) leave only candidates to look at.
    """
    candidates = {key for key, _ in after.items() - before.items()}
    candidates.update(before.keys() - after.keys())
    return [key for key in candidates if _bucket(before.get(key, "not observed")) != _bucket(after.get(key, "not observed"))]


def _flat(observed, across_stages: bool = False) -> dict[str, tuple[str, ...]]:
    """Per case version, its observations' identities and results in the order observed: repetition, stage, subject and
    result, four strings each; an observation's identity is what stays the same from run to run."""
    flat: dict[str, list[str]] = {}
    for o in observed:
        # an invariance pair's observation is of every stage at once: the stage recorded (its first difference's, or the
        # last stage when it passed) is no part of what it is, so a pair that passed before and fails now is one change;
        # a quote is identified by its text: finding ids are the engine's own and differ from run to run
        stage, subject = ("", o.subject) if across_stages else (o.stage, o.quote if o.quote is not None else o.subject)
        flat.setdefault(o.case_version, []).extend((o.repetition, stage, subject, o.result))
    return {case_version: tuple(items) for case_version, items in flat.items()}


def _index(case_version: str, flat: tuple[str, ...]) -> dict[tuple[str, str, str, str], str]:
    """A case version's observations by identity (case version, repetition, stage, subject), as _flat laid them out."""
    return {(case_version, *flat[i:i + 3]): flat[i + 3] for i in range(0, len(flat), 4)}


def _bucket(result: str) -> str:
    return "good" if result in _GOOD else result


def _count(observed) -> tuple[int, int] | None:
    if not observed:
        return None
    return (sum(1 for o in observed if o.result in _GOOD), len(observed))


def _sort_key(key):
    case_version, repetition, stage, subject = key
    return (case_version, tuple(int(p) for p in repetition.split("-")), m.STAGES.index(stage) if stage else -1, subject)


def format_comparison(c: Comparison) -> str:
    lines = [f"comparing {c.run_a} -> {c.run_b}"]
    if c.setup_changed:
        lines.append(f"!! run setup changed: {c.setup_a} ({c.fingerprint_a[:12]}) -> {c.setup_b} ({c.fingerprint_b[:12]})")
    else:
        lines.append(f"run setup: {c.setup_a} ({c.fingerprint_a[:12]}) in both")
    lines.extend(f"note: {note.text()}" for note in c.notes)
    lines.append("")
    for d in c.measures:
        lines.append(f"  {d.measure:<26} {_show(d.before):>16}  ->  {_show(d.after)}")
    lines.append("")
    regressions = c.regressions
    lines.append(f"{len(regressions)} regression(s), {len(c.changes) - len(regressions)} other change(s)")
    for change in c.changes:
        tag = "REGRESSION" if change.regression else "change"
        where = f"{change.stage} {change.subject}" if change.stage else f"pair {change.subject}"
        lines.append(f"  {tag:<10} {change.measure} {change.case_version} repetition {change.repetition} {where}: "
                     f"{change.before} -> {change.after}")
    return "\n".join(lines) + "\n"


def _show(count: tuple[int, int] | None) -> str:
    return "not observed" if count is None else f"{count[0]} of {count[1]}"


def compatibility_key(records: m.Records, run: m.Run) -> tuple:
    """Runs with equal keys can be compared (see measured_differently); only the latest of each key is kept in memory."""
    return tuple(of(records, run) for _, of in _MEASURED_ALIKE)
