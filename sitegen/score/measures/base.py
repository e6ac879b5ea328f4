"""What every measure shares: the judged run it reads, the observations it gives, and the record that describes it."""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from types import MappingProxyType
from typing import Any, Callable, Collection, Iterable, Iterator, Mapping, NamedTuple

from sitegen.core import model as m
from sitegen.load.spool import run_answers
from sitegen.score.matching import CaseContext, MatchingMethod, PreparedCases, judge_stage


class Reason:
    """Why an observation did not pass: a reason code and its parameters, every difference kept, made only on failure.

    The results record's English detail, `sitegen explain` and the pages' words are all rendered from it through the
    texts of the measure's record (Measure.reasons), so one vocabulary stands behind all three.
    """

    code: str

    def __init__(self, code: str, /, **params: Any):
        # made for every observation that does not pass, so kept cheap: the fresh keyword dict becomes its attributes
        params["code"] = code
        _set_attribute(self, "__dict__", params)

    @property
    def params(self) -> Mapping[str, Any]:
        return MappingProxyType({k: v for k, v in self.__dict__.items() if k != "code"})

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("a Reason is frozen")

    def __delattr__(self, name: str) -> None:
        raise AttributeError("a Reason is frozen")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Reason) and self.__dict__ == other.__dict__

    def __hash__(self) -> int:
        return hash((self.code, tuple(sorted(self.params.items()))))

    def __repr__(self) -> str:
        shown = "".join(f", {k}={v!r}" for k, v in self.params.items())
        return f"Reason({self.code!r}{shown})"

    def __reduce__(self):
        return _reason, (self.code, dict(self.params))  # crosses to and from worker processes like any value


_set_attribute = object.__setattr__  # past Reason's own refusal, once, in its constructor


def _reason(code: str, params: dict[str, Any]) -> Reason:
    return Reason(code, **params)


class Difference(NamedTuple):
    """One entry two readings (pair versions, repetitions) disagree on: its key and what each side read."""

    key: str
    left: object
    right: object


@dataclass(frozen=True)
class ReasonText:
    """A reason code's texts: the page's word (an English msgid, translated per locale), the results record's English
    detail rendered from the structured reason (`sitegen explain` uses `explained` when the measure gives one)."""

    code: str
    word: str
    detail: Callable[[Reason], str] | None = None
    explained: Callable[[Reason], str] | None = None
    # the page's word when the expected finding has no passage (something wholly absent), if `word` speaks of one
    word_absent: str | None = None


@dataclass(frozen=True)
class Measure:
    """One measure of METHOD.md in one place: its id, page title (English msgid), function, reasons, method-page example."""

    id: str
    title: str
    function: Callable[..., Iterator[Any]]
    reasons: tuple[ReasonText, ...]
    example_case: str
    # an observation involves two (case version, repetition) slots, a pair of repetitions or of versions, and counts in both
    of_pairs: bool = False
    # an observation compares every stage (and the merge) at once, so it has no stage of its own: the one the results
    # record gives it is only where its first difference was (or the last stage, when it passed), and it is named and
    # compared across runs without it
    across_stages: bool = False

    def reason(self, code: str) -> ReasonText:
        return next(r for r in self.reasons if r.code == code)


def N_(message: str) -> str:
    """Marks an English msgid for extraction into the catalogs; the page translates it in its own language."""
    return message


class Observed(NamedTuple):
    """One observation of one measure, passed ones included; `cases` says which (case version, repetition) it involves.

    A named tuple rather than a dataclass: a large run makes millions of these, and tuples are built several times faster.
    """

    measure: str
    case_version: str
    repetition: str
    stage: str
    subject: str
    result: str
    reason: str = ""
    detail: str = ""
    cases: tuple[tuple[str, int], ...] = ()
    quote: str | None = None  # QUOTE_FIDELITY: the collapsed quote, which identifies the observation across runs
    why: Reason | None = None  # the structured reason of an observation that did not pass; `reason` is its code


class Passed(NamedTuple):
    """A measure's passed observations counted, not listed: how many, and how many of them each case took part in.

    Scoring a run only counts its passed observations, and most observations pass; a measure asked not to list them
    (listed=False) yields one of these instead, after the observations that did not pass. `involved` is indexed by the
    case's slot in the run (JudgedRun.slots): the number of passed observations that (case version, repetition) is in.
    """

    count: int
    involved: list[int]


class Slot(NamedTuple):
    """One (case version, repetition) of a judged run, with everything a measure reads of it, in stage order."""

    index: int  # its place in JudgedRun.slots (case_order's), which Passed.involved is indexed by
    case_version: str
    repetition: int
    label: str  # the repetition as the record writes it
    cases: tuple[tuple[str, int], ...]  # ((case version, repetition),): what an observation of this slot alone involves
    answer: m.Answer
    verdicts: tuple[m.StageVerdict, ...]  # per stage, in JudgedRun.stages order
    numbers: tuple[int, ...]  # each verdict's number in the run (JudgedRun.numbers)


@dataclass(frozen=True)
class JudgedRun:
    """A run's answers with every stage judged once, shared by all seven measures."""

    run: m.Run
    stages: tuple[str, ...]
    case_versions: tuple[m.CaseVersion, ...]
    pairs: tuple[m.Pair, ...]
    contexts: Mapping[str, CaseContext]
    verdicts: Mapping[tuple[str, int, str], m.StageVerdict]
    method: MatchingMethod
    rerun_verdict: Callable[[m.Answer, str], m.StageVerdict]
    # each verdict's number in the run, the same for every repetition and stage that shares the verdict (equal findings
    # are judged once): what a measure keys what it found out about a verdict by, so it looks at a shared one once
    numbers: Mapping[tuple[str, int, str], int]
    # every (case version, repetition) in case version then repetition order, and each case version's own, in repetition order
    slots: tuple[Slot, ...]
    case_slots: Mapping[str, tuple[Slot, ...]]
    verdict_count: int  # how many verdicts were judged: the numbers are 0 to verdict_count - 1

    def counter(self) -> list[int]:
        """A count per slot, all zero: what a measure counts its passed observations per case in (Passed.involved)."""
        return [0] * len(self.slots)


def judge_run(records: m.Records, run: m.Run, method: MatchingMethod, prepared: PreparedCases | None = None,
              only: Collection[str] | None = None) -> JudgedRun:
    """Every stage of the run's answers judged once; `prepared` (the pass's) shares each case's preparation between runs.

    With `only`, just those of the suite's case versions, in the suite's order, and the pairs among them: each measure
    observes a case version (an invariance pair: both its versions) on its own, so their observations are exactly those
    the whole run has of them (score/parts.py and reasons.derive_reasons rely on this).
    """
    suite = records.suite(run.suite, run.suite_version)
    chosen = suite.case_versions if only is None else tuple(cv for cv in suite.case_versions if cv in only)
    case_versions = tuple(records.case_versions[cv] for cv in chosen)
    if prepared is None:
        prepared = PreparedCases(records.case_versions)
    contexts = {cv.id: CaseContext(cv, prepared[cv.id]) for cv in case_versions}
    stages = records.stages(run)
    made = 0  # verdicts judged so far in the run
    slots: list[Slot] = []
    case_slots: dict[str, tuple[Slot, ...]] = {}
    answers = run_answers(records.answers, run.id)
    repetitions = range(1, run.repetitions + 1)
    for cv in case_versions:
        cv_id = cv.id
        judged_before: list[list[tuple[tuple[m.Finding, ...], m.StageVerdict, int]]] = [[] for _ in stages]
        # each engine answer judged in this case version, with its verdicts and their numbers
        seen: list[tuple[m.EngineAnswer, tuple[tuple[m.StageVerdict, ...], tuple[int, ...]]]] = []
        context = contexts[cv_id]
        first = len(slots)
        for rep in repetitions:
            answer = answers[(cv_id, rep)]
            engine = answer.answer
            # equal answers come from the spool as the very same object: then every stage's verdict is the one before
            for before, again in seen:
                if before is engine:
                    break
            else:
                again = None
            if again is None:
                verdicts, numbers = [], []
                for s, stage in enumerate(stages):
                    findings = engine.stage_findings(stage)
                    for before, verdict, number in judged_before[s]:
                        if before == findings:  # an engine often repeats itself: equal findings get the verdict made before
                            break
                    else:
                        verdict, number = judge_stage(context, findings, method), made
                        made += 1
                        judged_before[s].append((findings, verdict, number))
                    verdicts.append(verdict)
                    numbers.append(number)
                again = (tuple(verdicts), tuple(numbers))
                seen.append((engine, again))
            slots.append(_new(Slot, (len(slots), cv_id, rep, str(rep), ((cv_id, rep),), answer) + again))
        case_slots[cv_id] = tuple(slots[first:])
    in_suite = set(chosen)
    pairs = tuple(p for p in records.pairs if p.versions[0] in in_suite and p.versions[1] in in_suite)

    # by case version and stage (equal answers of two case versions may be one object), each rerun judged with its verdict
    reruns: dict[tuple[str, str], list[tuple[m.EngineAnswer, m.StageVerdict]]] = {}

    def rerun_verdict(answer: m.Answer, stage: str) -> m.StageVerdict:
        # repetitions that repeat an answer mostly repeat its rerun too, as the very same object: judged once per run
        kept = reruns.setdefault((answer.case_version, stage), [])
        for rerun, verdict in kept:
            if rerun is answer.rerun:
                return verdict
        verdict = judge_stage(contexts[answer.case_version], answer.rerun.stage_findings(stage), method)
        kept.append((answer.rerun, verdict))
        return verdict

    return JudgedRun(run, stages, case_versions, pairs, contexts, _BySlot(case_slots, stages, _VERDICTS), method, rerun_verdict,
                     _BySlot(case_slots, stages, _NUMBERS), tuple(slots), MappingProxyType(case_slots), made)


# a Slot, or an Observed with all its fields, made from its fields in order (checked here), skipping the named tuple's
# Python-level __new__: a run makes thousands of each
_new = tuple.__new__
assert Observed._fields == ("measure", "case_version", "repetition", "stage", "subject", "result", "reason", "detail", "cases",
                            "quote", "why")
observed_of = partial(_new, Observed)  # an Observed from all eleven of its fields, in order, as one tuple
assert Slot._fields == ("index", "case_version", "repetition", "label", "cases", "answer", "verdicts", "numbers")
_VERDICTS, _NUMBERS = Slot._fields.index("verdicts"), Slot._fields.index("numbers")


class _BySlot(Mapping[tuple[str, int, str], Any]):
    """A slot's verdict or verdict number per stage, by (case version, repetition, stage): read from the slots, not kept twice."""

    def __init__(self, case_slots: Mapping[str, tuple[Slot, ...]], stages: tuple[str, ...], field: int):
        self._case_slots, self._field = case_slots, field
        self._stages = {stage: i for i, stage in enumerate(stages)}

    def __getitem__(self, key: tuple[str, int, str]) -> Any:
        cv_id, rep, stage = key
        slots, at = self._case_slots.get(cv_id), self._stages.get(stage)
        if slots is None or at is None or type(rep) is not int or not 1 <= rep <= len(slots):
            raise KeyError(key)
        return slots[rep - 1][self._field][at]

    def __iter__(self) -> Iterator[tuple[str, int, str]]:
        for cv_id, slots in self._case_slots.items():
            for slot in slots:
                for stage in self._stages:
                    yield (cv_id, slot.repetition, stage)

    def __len__(self) -> int:
        return sum(map(len, self._case_slots.values())) * len(self._stages)


def case_order(case_versions: Iterable[m.CaseVersion], repetitions: int) -> tuple[tuple[str, int], ...]:
    """Every (case version, repetition) of a run in slot order: case versions in the suite's order, then repetitions."""
    return tuple((cv.id, rep) for cv in case_versions for rep in range(1, repetitions + 1))


def each_stage(judged: JudgedRun, measure: Measure | str, case_versions: Iterable[m.CaseVersion],
               problem: Callable[[m.StageVerdict], Reason | None], texts: Mapping[str, ReasonText],
               listed: bool) -> Iterator[Observed | Passed]:
    """One observation per stage of each repetition of these case versions: failed with the reason `problem` finds, if
    any, else passed. A verdict standing for several repetitions (equal answers are judged once) is looked at once."""
    stages = judged.stages
    found: list = [_UNSEEN] * judged.verdict_count  # by the verdict's number: None, or its reason and the record's detail
    involved = None if listed else judged.counter()
    total = 0
    for cv in case_versions:
        for slot in judged.case_slots[cv.id]:
            cv_id, repetition, cases = slot.case_version, slot.label, slot.cases
            passed = 0
            for stage, verdict, key in zip(stages, slot.verdicts, slot.numbers):
                failure = found[key]
                if failure is _UNSEEN:
                    why = problem(verdict)
                    failure = None if why is None else (why, texts[why.code].detail(why))
                    if not listed:  # every observation listed keeps a reason of its own, as pack_reasons has always packed them
                        found[key] = failure
                if failure is not None:
                    why, detail = failure
                    yield _new(Observed, (measure, cv_id, repetition, stage, "-", m.FAILED, why.code, detail, cases, None, why))
                elif listed:
                    yield Observed(measure, cv_id, repetition, stage, "-", m.PASSED, "", "", cases, None)
                else:
                    passed += 1
            if passed:
                involved[slot.index] = passed
                total += passed
    if involved is not None:
        yield Passed(total, involved)


_UNSEEN = object()  # not looked at yet (None is taken: looked at, and passed)


def failed(measure: str, case_version: str, repetition: str, stage: str, subject: str, result: str, why: Reason,
           texts: Mapping[str, ReasonText], cases: tuple[tuple[str, int], ...], quote: str | None = None) -> Observed:
    """An observation that did not pass, its record's detail rendered from its structured reason."""
    return _new(Observed, (measure, case_version, repetition, stage, subject, result, why.code, texts[why.code].detail(why),
                           cases, quote, why))


def more(differences: tuple) -> str:
    """The results record's tail for the differences beyond the first, as it has always been written."""
    return f" (+{len(differences) - 1} more difference(s))" if len(differences) > 1 else ""


def texts_of(reasons: tuple[ReasonText, ...]) -> Mapping[str, ReasonText]:
    return MappingProxyType({r.code: r for r in reasons})
