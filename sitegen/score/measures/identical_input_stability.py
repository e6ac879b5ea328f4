"""IDENTICAL_INPUT_STABILITY: two repetitions of one case version in one stage must give the same outcomes and counts."""

from __future__ import annotations

from itertools import combinations
from typing import Iterator

from sitegen.core import model as m
from sitegen.score.measures.base import (N_, Difference, JudgedRun, Measure, Observed, Passed, Reason, ReasonText, failed,
                                         more, texts_of)


def _detail(why: Reason) -> str:
    """The first difference in the record's words, and how many more there are; every one is kept in the reason."""
    first = why.differences[0]
    i, j = why.repetitions
    return f"{first.key}: repetition {i} gives {first.left}, repetition {j} gives {first.right}" + more(why.differences)


REASONS = (
    ReasonText("outcome", N_("an expected finding found in one repetition, missed in the other"), _detail),
    ReasonText("count.flaws", N_("number of flaws differs"), _detail),
    ReasonText("count.strengths", N_("number of strengths differs"), _detail),
    ReasonText("count.unexpected", N_("number of unexpected findings differs"), _detail),
    ReasonText("count.prohibited", N_("number of prohibited findings differs"), _detail),
)
_TEXTS = texts_of(REASONS)


def identical_input_stability(judged: JudgedRun, listed: bool = True) -> Iterator[Observed | Passed]:
    """Each unordered pair of repetitions of one case version in one stage: same outcomes and counts."""
    # positions in the case version's slots, with the record's label and the reason's numbers of each pair of repetitions
    pairs = tuple((i, j, f"{i + 1}-{j + 1}", (i + 1, j + 1)) for i, j in combinations(range(judged.run.repetitions), 2))
    signatures: list = [None] * judged.verdict_count  # by the verdict's number: one verdict stands for every repetition that gave it
    involved = None if listed else judged.counter()
    total = 0
    for cv in judged.case_versions:
        cv_id = cv.id
        slots = judged.case_slots[cv_id]
        for s, stage in enumerate(judged.stages):
            for i, j, label, repetitions in pairs:
                first, second = slots[i], slots[j]
                left, right = first.verdicts[s], second.verdicts[s]
                if left is not right:
                    a = signatures[first.numbers[s]]
                    if a is None:
                        a = signatures[first.numbers[s]] = _signature(left)
                    b = signatures[second.numbers[s]]
                    if b is None:
                        b = signatures[second.numbers[s]] = _signature(right)
                if left is right or a == b:
                    # equal answers are judged once, so nothing can differ; equal outcomes and counts are compared in one go
                    if listed:
                        yield Observed("IDENTICAL_INPUT_STABILITY", cv_id, label, stage, "-", m.PASSED, "", "",
                                       first.cases + second.cases, None)
                    else:
                        involved[first.index] += 1
                        involved[second.index] += 1
                        total += 1
                    continue
                differences = _differences(left.expected, a, b)
                key = differences[0].key
                why = Reason("outcome" if key.startswith("expected:") else f"count.{key}", repetitions=repetitions,
                             differences=differences)
                yield failed("IDENTICAL_INPUT_STABILITY", cv_id, label, stage, "-", m.FAILED, why, _TEXTS,
                             first.cases + second.cases)
    if involved is not None:
        yield Passed(total, involved)


def _signature(verdict: m.StageVerdict) -> tuple:
    """What the measure compares, as one value: whether each expected finding was matched, in key order, then the counts
    of flaws, strengths, unexpected and prohibited findings, voluntary strengths left out."""
    flaws = strengths = unexpected = prohibited = 0
    for v in verdict.findings:
        if v.category == m.VOLUNTARY:
            continue  # voluntary strengths are left out
        if v.finding.kind == m.FLAW:
            flaws += 1
        elif v.finding.kind == m.STRENGTH:
            strengths += 1
        if v.category == m.UNEXPECTED:
            unexpected += 1
        elif v.category == m.PROHIBITED:
            prohibited += 1
    return tuple([ev.finding is not None for ev in verdict.expected]), flaws, strengths, unexpected, prohibited


_COUNTS = ("flaws", "strengths", "unexpected", "prohibited")  # the signature's counts, in its order, as the record names them


def _differences(expected: tuple[m.ExpectedVerdict, ...], left: tuple, right: tuple) -> tuple[Difference, ...]:
    """Every entry two signatures disagree on, in the results record's words: each expected finding (in key order, as
    "expected:ID", matched or missed), then each count."""
    differences = [_new(Difference, (f"expected:{ev.expected.id}", "matched" if a else "missed", "matched" if b else "missed"))
                   for ev, a, b in zip(expected, left[0], right[0]) if a != b]
    differences += [_new(Difference, (name, a, b)) for name, a, b in zip(_COUNTS, left[1:], right[1:]) if a != b]
    return tuple(differences)


_new = tuple.__new__  # a Difference made from its three fields, in order


MEASURE = Measure("IDENTICAL_INPUT_STABILITY", N_("Same assessment when repeated"), identical_input_stability, REASONS,
                  example_case="papers-location-unstated", of_pairs=True)
