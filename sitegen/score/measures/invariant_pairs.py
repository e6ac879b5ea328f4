"""INVARIANT_PAIRS: the two versions of an invariance pair (same rules) must read alike in each repetition."""

from __future__ import annotations

from typing import Iterator, NamedTuple

from sitegen.core import model as m
from sitegen.score.measures.base import (N_, Difference, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, failed,
                                         more, texts_of)


def _detail(why: Reason) -> str:
    """The first difference in the record's words, and how many more there are; every one is kept in the reason."""
    first = why.differences[0]
    return (f"{first.key}: {why.left} reads {_show(first.left)}, {why.right} reads {_show(first.right)}"
            + more(why.differences))


REASONS = (
    ReasonText("expected", N_("the versions found different expected findings"), _detail),
    ReasonText("count.unexpected", N_("number of unexpected findings differs"), _detail),
    ReasonText("unexpected", N_("the versions gave different unexpected findings"), _detail),
    ReasonText("merge", N_("the versions fared differently in the merge"), _detail),
)
_TEXTS = texts_of(REASONS)
_ABSENT = "not in key"


def _fate(judged: JudgedRun, cv_id: str, rep: int) -> dict[str, str]:
    """How each expected finding fared through the merge: kept, lost, changed, added or none."""
    reviewer = judged.verdicts[(cv_id, rep, m.REVIEWER)]
    report = judged.verdicts[(cv_id, rep, m.REPORT)]
    fates = {}
    for rev_e, rep_e in zip(reviewer.expected, report.expected):
        rule = next((v.finding.rule for v in report.findings if v.finding.id == rep_e.finding), None)
        if rev_e.finding and rep_e.finding:
            before = next(v.finding.rule for v in reviewer.findings if v.finding.id == rev_e.finding)
            fates[rev_e.expected.id] = "kept" if before == rule else "changed"
        elif rev_e.finding:
            fates[rev_e.expected.id] = "lost"
        elif rep_e.finding:
            fates[rev_e.expected.id] = "added"
        else:
            fates[rev_e.expected.id] = "none"
    return fates


def _reading(judged: JudgedRun, cv_id: str, rep: int) -> dict[str, object]:
    """What a pair comparison looks at for one version: matched expected findings with their rule, unexpected count, merge fate."""
    reading: dict[str, object] = {}
    for stage in judged.stages:
        verdict = judged.verdicts[(cv_id, rep, stage)]
        rules = {v.finding.id: v.finding for v in verdict.findings}
        for ev in verdict.expected:
            found = rules[ev.finding] if ev.finding else None
            reading[f"{stage}:{ev.expected.id}"] = (
                (found.kind, found.missing, found.rule) if found else "not found"
            )
        unexpected = [v.finding for v in verdict.findings if v.category == m.UNEXPECTED]
        if judged.method.unexpected_by_identity:
            # scorer 7 on: the multiset of (kind, primary rule, missing flag); quotes and locations differ with the documents
            reading[f"{stage}:unexpected"] = UnexpectedOutput(tuple(sorted((f.kind, f.rule, f.missing) for f in unexpected)))
        else:
            reading[f"{stage}:unexpected"] = len(unexpected)
    if m.REPORT in judged.stages:
        for expected_id, fate in _fate(judged, cv_id, rep).items():
            reading[f"merge:{expected_id}"] = fate
    return reading


def invariant_pairs(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each invariance pair (same rules) in each repetition: both versions must read alike."""
    stage = judged.stages[-1]
    involved = None if listed else judged.counter()
    total = 0
    for pair in judged.pairs:
        if not pair.compared:
            continue
        a, b = pair.versions
        for rep in range(1, judged.run.repetitions + 1):
            left, right = _reading(judged, a, rep), _reading(judged, b, rep)
            cases = ((a, rep), (b, rep))
            keys = list(left) + [k for k in right if k not in left]  # reviewer stage first, then report, then merge
            differing = [k for k in keys if left.get(k, _ABSENT) != right.get(k, _ABSENT)]
            if not differing:
                if listed:
                    yield Observed("INVARIANT_PAIRS", a, str(rep), stage, pair.id, m.PASSED, "", "", cases, None)
                else:
                    involved[judged.case_slots[a][rep - 1].index] += 1
                    involved[judged.case_slots[b][rep - 1].index] += 1
                    total += 1
                continue
            first = differing[0]
            why = Reason(_pair_reason(first, left.get(first)), pair=pair.id, left=a, right=b, repetition=rep,
                         differences=tuple(Difference(k, left.get(k, _ABSENT), right.get(k, _ABSENT)) for k in differing))
            # recorded at its first difference's stage (the merge's at the report's); the observation itself is of every
            # stage (Measure.across_stages), so the pages and comparisons name and match it without that stage
            scope = first.split(":", 1)[0]
            yield failed("INVARIANT_PAIRS", a, str(rep), m.REVIEWER if scope == m.REVIEWER else m.REPORT, pair.id,
                         m.FAILED, why, _TEXTS, cases)
    if involved is not None:
        yield Passed(total, involved)


class UnexpectedOutput(NamedTuple):
    """One stage's unexpected findings as a pair compares them from scorer 7: sorted (kind, primary rule, missing flag)."""

    findings: tuple[tuple[str, str, bool], ...]

    def __str__(self) -> str:
        shown = ", ".join(f"{kind} {rule} (missing={str(missing).lower()})" for kind, rule, missing in self.findings)
        return f"unexpected [{shown}]" if shown else "no unexpected finding"


def _pair_reason(key: str, value: object) -> str:
    scope, _, what = key.partition(":")
    if scope == "merge":
        return "merge"
    if what == "unexpected":
        return "unexpected" if isinstance(value, UnexpectedOutput) else "count.unexpected"
    return "expected"


def _show(value: object) -> str:
    if isinstance(value, UnexpectedOutput):
        return str(value)
    if isinstance(value, tuple):
        kind, missing, rule = value
        return f"found as {kind} (missing={str(missing).lower()}, rule {rule})"
    return str(value)


MEASURE = Measure("INVARIANT_PAIRS", N_("Unmoved by details that must not matter"), invariant_pairs, REASONS,
                  example_case="licence-gender-flawed-feminine", of_pairs=True, across_stages=True)
