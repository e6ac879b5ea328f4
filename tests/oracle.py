"""A second, independent reading of the matching rules and per-stage measures of the scoring method.

Written from the written method alone, before reading the scorer, so that the
property test in test_oracle.py compares two readings of one text rather than
the scorer with itself. It is deliberately plain and slow: the assignment is
chosen by trying every one-to-one assignment, and every rule is spelled out
where the method states it. It uses its own small types (plain tuples and
dataclasses) and knows nothing of sitegen.

Where the method leaves something to read, the choice taken is named at the
place it is made (look for "Reading:").
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field
from typing import Optional

EXACT = "exact"
CONTAINED = "contained"
LOCATION = "location"
ABSENT = "absent"

MATCHED = "matched"
DUPLICATE = "duplicate"
PROHIBITED = "prohibited"
VOLUNTARY = "voluntary"
UNEXPECTED = "unexpected"


@dataclass(frozen=True)
class Passage:
    """A span of the document, written by quote, by lines (first, last; 1-based) or both."""

    quote: Optional[str] = None
    lines: Optional[tuple[int, int]] = None


@dataclass(frozen=True)
class Expected:
    """An expected or prohibited finding: passage None means something wholly absent."""

    kind: str
    rules: frozenset
    missing: bool
    passage: Optional[Passage]
    reviewer_expected: bool = True


@dataclass(frozen=True)
class Voluntary:
    """An allowed strength, by rule and optionally by passage."""

    rule: str
    passage: Optional[Passage] = None


@dataclass(frozen=True)
class Finding:
    kind: str
    rule: str
    missing: bool
    quote: Optional[str] = None
    location: Optional[tuple[int, int]] = None


@dataclass
class Verdict:
    """One finding's fate: its category, and for a match the expected finding's index and the match kind."""

    category: str
    expected: Optional[int] = None
    match: Optional[str] = None
    duplicate_of: tuple = ()
    prohibited: tuple = ()


@dataclass
class StageResult:
    verdicts: list
    matched: dict = field(default_factory=dict)  # expected index -> finding index


def collapse(text: str) -> str:
    """Every run of spaces, tabs and line breaks becomes one space; nothing else changes (no trimming either)."""
    out = []
    in_run = False
    for ch in text:
        if ch in " \t\n\r":
            # Reading: a carriage return is a line-break character and so part of a run.
            if not in_run:
                out.append(" ")
            in_run = True
        else:
            out.append(ch)
            in_run = False
    return "".join(out)


def doc_lines(document: str) -> list:
    """The document's lines, each its characters without its line break (a line feed, or a carriage return and line feed)."""
    return [line[:-1] if line.endswith("\r") else line for line in document.split("\n")]


def collapsed_with_lines(document: str):
    """The collapsed document, and for each of its characters the 1-based line its first source character is on."""
    chars = []
    owners = []
    line = 1
    in_run = False
    for ch in document:
        if ch in " \t\n\r":
            if not in_run:
                chars.append(" ")
                owners.append(line)
            in_run = True
        else:
            chars.append(ch)
            owners.append(line)
            in_run = False
        if ch == "\n":
            line += 1
    return "".join(chars), owners


def occurrences(haystack: str, needle: str) -> list:
    found = []
    start = 0
    while needle:
        at = haystack.find(needle, start)
        if at < 0:
            break
        found.append(at)
        start = at + 1
    return found


def passage_text(document: str, passage: Passage) -> str:
    """The text of the passage: its quote, or the characters of its lines without the final line break."""
    if passage.quote is not None:
        return passage.quote
    first, last = passage.lines
    return "\n".join(doc_lines(document)[first - 1:last])


def passage_span(document: str, passage: Passage) -> tuple:
    """The lines the passage occupies: its lines, or the lines of the one place its quote stands."""
    if passage.quote is None:
        return passage.lines
    flat, owners = collapsed_with_lines(document)
    q = collapse(passage.quote)
    spans = [(owners[at], owners[at + len(q) - 1]) for at in occurrences(flat, q)]
    if passage.lines is not None:
        # a quote standing several times says which place by its lines; it must occupy exactly those
        if tuple(passage.lines) not in spans:
            raise ValueError("quote does not occupy exactly the passage's lines")
        return tuple(passage.lines)
    if len(spans) != 1:
        raise ValueError(f"key quote {passage.quote!r} stands {len(spans)} times in the document")
    return spans[0]


def evidence_match(document: str, passage: Optional[Passage], finding: Finding, contained: bool = True) -> Optional[str]:
    """Condition 4: how the finding points at the passage (exact, contained, location, absent), or None.

    contained=False is scorer 5, which knew exact quotes only.
    """
    if passage is None:
        # Decision: "quoting nothing" means neither a quote nor a location.
        if finding.quote is None and finding.location is None:
            return ABSENT
        return None
    span = passage_span(document, passage)
    kinds = []
    if finding.quote is not None:
        q = collapse(finding.quote)
        p = collapse(passage_text(document, passage))
        if q == p:
            kinds.append(EXACT)
        elif contained and span[0] == span[1]:
            line = collapse(doc_lines(document)[span[0] - 1])
            if p in q and q in line:
                kinds.append(CONTAINED)
    if finding.location is not None and tuple(finding.location) == tuple(span):
        kinds.append(LOCATION)
    # Reading: a finding with both a quote and a location points at the passage if either does. The method
    # does not say which kind such a match is; the quote is taken first (exact, then contained), the location
    # after it, so a contained quote with the right location is a contained match, and ranks below exact ones.
    # (First written as exact, location, contained; changed to the scorer's choice, which the text allows.)
    for kind in (EXACT, CONTAINED, LOCATION):
        if kind in kinds:
            return kind
    return None


def match(document: str, exp: Expected, finding: Finding, contained: bool = True) -> Optional[str]:
    """The four conditions; the match kind when all hold, else None."""
    if finding.kind != exp.kind:
        return None
    if finding.rule not in exp.rules:
        return None
    if finding.missing != exp.missing:
        return None
    return evidence_match(document, exp.passage, finding, contained)


def is_exact(kind: str) -> bool:
    return kind in (EXACT, LOCATION, ABSENT)


def all_assignments(n_findings: int, n_expected: int, can):
    """Every one-to-one partial assignment, as a tuple: for each finding its expected index or None."""

    def extend(i, taken):
        if i == n_findings:
            yield ()
            return
        for rest in extend(i + 1, taken):
            yield (None,) + rest
        for e in range(n_expected):
            if e not in taken and can[i][e] is not None:
                for rest in extend(i + 1, taken | {e}):
                    yield (e,) + rest

    yield from extend(0, frozenset())


def choose(assignments: list, can, reading: str = "greedy") -> tuple:
    """The assignment the Decision chooses: most matches, then most exact ones, then earliest findings to earliest expected.

    Reading "set-first": the set of matched findings is chosen first (the earliest findings matched),
    then each of them is given the earliest expected finding it can take, in the answer's order.
    Reading "greedy": the earliest finding is matched, to the earliest expected finding it can take,
    then the next; i.e. the lexicographically smallest tuple of expected indices, "unmatched" last.
    """

    def matches(a):
        return sum(1 for e in a if e is not None)

    def exacts(a):
        return sum(1 for i, e in enumerate(a) if e is not None and is_exact(can[i][e]))

    big = 10**9
    if reading == "set-first":
        def order(a):
            return (-matches(a), -exacts(a), tuple(0 if e is not None else 1 for e in a), tuple(big if e is None else e for e in a))
    else:
        def order(a):
            return (-matches(a), -exacts(a), tuple(big if e is None else e for e in a))
    return min(assignments, key=order)


def judge(document: str, key: list, prohibited: list, voluntary: list, findings: list, reading: str = "greedy",
          contained: bool = True) -> StageResult:
    """Every finding's category, in the method's order, with the one-to-one assignment chosen by exhaustive search."""
    can = [[match(document, exp, f, contained) for exp in key] for f in findings]
    chosen = choose(list(all_assignments(len(findings), len(key), can)), can, reading)
    taken = {e: i for i, e in enumerate(chosen) if e is not None}
    verdicts = []
    for i, f in enumerate(findings):
        e = chosen[i]
        if e is not None:
            verdicts.append(Verdict(MATCHED, e, can[i][e]))
            continue
        dups = tuple(j for j in range(len(key)) if can[i][j] is not None and j in taken and taken[j] != i)
        if dups:
            verdicts.append(Verdict(DUPLICATE, duplicate_of=dups))
            continue
        prohibs = tuple(j for j, p in enumerate(prohibited) if match(document, p, f, contained) is not None)
        if prohibs:
            verdicts.append(Verdict(PROHIBITED, prohibited=prohibs))
            continue
        if f.kind == "strength" and any(
            v.rule == f.rule and (v.passage is None or evidence_match(document, v.passage, f, contained) is not None)
            for v in voluntary
        ):
            # Reading: a voluntary strength is told by kind and rule (and passage when the key gives one);
            # its missing flag is not looked at, as the method names none for it.
            verdicts.append(Verdict(VOLUNTARY))
            continue
        verdicts.append(Verdict(UNEXPECTED))
    return StageResult(verdicts, taken)


# --- per-stage parts of the measures -------------------------------------------------------------


def grounding(key: list, result: StageResult, stage: str) -> dict:
    """GROUNDING in one stage without reruns: expected index -> "passed" or "pending" (a first miss)."""
    out = {}
    for j, exp in enumerate(key):
        if stage == "reviewer" and not exp.reviewer_expected:
            continue
        out[j] = "passed" if j in result.matched else "pending"
    return out


def is_clean(key: list) -> bool:
    """A clean case version: its key expects no flaw."""
    return not any(exp.kind == "flaw" for exp in key)


def clean_case_flaws(key: list, findings: list) -> Optional[bool]:
    """None when the version is not clean (nothing observed); else whether no flaw at all was reported."""
    if not is_clean(key):
        return None
    return not any(f.kind == "flaw" for f in findings)


def prohibited_output(result: StageResult) -> bool:
    """Passes when no finding of the stage ended as prohibited."""
    return not any(v.category == PROHIBITED for v in result.verdicts)


def quote_fidelity(document: str, findings: list) -> list:
    """One observation per quote given: whether it stands verbatim in the document after collapsing.

    Reading: a quote of nothing but whitespace (collapsed to "" or one space) "cannot be checked", and fails.
    """
    flat = collapse(document)
    return [collapse(f.quote) not in ("", " ") and collapse(f.quote) in flat for f in findings if f.quote is not None]


def stability_signature(key: list, findings: list, result: StageResult) -> tuple:
    """What identical-input stability compares: each expected finding's outcome and four counts, voluntary left out."""
    outcomes = tuple(j in result.matched for j in range(len(key)))
    counted = [(f, v) for f, v in zip(findings, result.verdicts) if v.category != VOLUNTARY]
    flaws = sum(1 for f, _ in counted if f.kind == "flaw")
    strengths = sum(1 for f, _ in counted if f.kind == "strength")
    unexpected = sum(1 for _, v in counted if v.category == UNEXPECTED)
    prohibited = sum(1 for _, v in counted if v.category == PROHIBITED)
    return outcomes, flaws, strengths, unexpected, prohibited


def stable(key: list, a_findings: list, a: StageResult, b_findings: list, b: StageResult) -> bool:
    return stability_signature(key, a_findings, a) == stability_signature(key, b_findings, b)
