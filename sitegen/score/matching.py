"""Structured matching of one stage's findings against the answer key: four conditions, one-to-one, deterministic."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping, NamedTuple

from sitegen.core import model as m
from sitegen.core.text import DocumentText, collapse, quotes_nothing
from sitegen.score.assignment import _RANK, _assign, _edges_and_assignment  # noqa: F401 (_RANK, _assign: the contract tests read them here)



@dataclass(frozen=True)
class MatchingMethod:
    """A named, versioned variant of the scoring rules; each recorded run is re-verified with its own."""

    version: int
    id: str
    allow_contained: bool  # v6 on: a wider quote on the passage's line is a contained match (v5 knew exact quotes only)
    unexpected_by_identity: bool = False  # v7 on: pairs compare unexpected findings by (kind, rule, missing), not their number
    survival_through_every_duplicate: bool = False  # v7 on: REDUCER_SURVIVAL counts a duplicate for every expected finding it duplicates


METHODS = {
    5: MatchingMethod(5, m.MATCHING_METHODS[5], allow_contained=False),
    6: MatchingMethod(6, m.MATCHING_METHODS[6], allow_contained=True),
    7: MatchingMethod(7, m.MATCHING_METHODS[7], allow_contained=True, unexpected_by_identity=True, survival_through_every_duplicate=True),
}


def method_for(scorer_version: int) -> MatchingMethod:
    return METHODS[scorer_version]


class PreparedCase:
    """What matching needs from one case version whatever the answer: made once per pass, shared by every run's judging."""

    def __init__(self, case_version: m.CaseVersion):
        self.case_version = case_version
        self.text = DocumentText(case_version.document)
        self._passage_text: dict[tuple[str | None, tuple[int, int]], str] = {}
        self._line_texts: tuple[str, ...] | None = None  # each line's collapsed text, built on first need
        # conditions 1-3 (kind, primary rule, missing flag) as a key, so a finding meets only the key findings that pass them
        self.expected_by_identity = _by_identity(case_version.key.expected)
        self.expected_ids = tuple(e.id for e in case_version.key.expected)  # in key order, as verdicts name them
        self.prohibited_by_identity = _by_identity(case_version.key.prohibited)
        # how each expected finding fared in a stage without findings: missed, with nothing near it
        self.nothing_found = tuple([_new(_ExpectedVerdict, (e, None, None, "nothing", None)) for e in case_version.key.expected])

    def passage_text(self, passage: m.Passage) -> str:
        # keyed by the passage's fields: hashing the frozen dataclass itself costs a Python call every time
        cache_key = (passage.quote, passage.lines)
        text = self._passage_text.get(cache_key)
        if text is None:
            raw = passage.quote if passage.quote is not None else self.text.lines_text(*passage.lines)
            text = self._passage_text[cache_key] = collapse(raw)
        return text

    def line_text(self, line: int) -> str:
        """The collapsed text of one line of the document, its characters without its line break."""
        if self._line_texts is None:
            self._line_texts = tuple(map(collapse, self.text.lines()))
        return self._line_texts[line - 1]


class PreparedCases:
    """Each case version prepared on first need and kept for the pass that owns this: its document is collapsed once, not once a run."""

    def __init__(self, case_versions: Mapping[str, m.CaseVersion]):
        self._case_versions = case_versions
        self._prepared: dict[str, PreparedCase] = {}

    def __getitem__(self, case_version: str) -> PreparedCase:
        prepared = self._prepared.get(case_version)
        if prepared is None:
            prepared = self._prepared[case_version] = PreparedCase(self._case_versions[case_version])
        return prepared


class CaseContext:
    """What matching needs from one case version for one run's answers: the prepared case, and what its findings decide.

    What the engine's findings decide (quotes collapsed, facts) is kept here, for one run only, so memory stays flat in
    the number of runs; what the case alone decides comes from the PreparedCase, which a pass shares between runs.
    """

    def __init__(self, case_version: m.CaseVersion, prepared: PreparedCase | None = None):
        prepared = prepared if prepared is not None else PreparedCase(case_version)
        self.case_version = case_version
        self.text = prepared.text
        self.passage_text = prepared.passage_text
        self.line_text = prepared.line_text
        self.expected_by_identity = prepared.expected_by_identity
        self.expected_ids = prepared.expected_ids
        self.prohibited_by_identity = prepared.prohibited_by_identity
        self.nothing_found = prepared.nothing_found
        self._collapsed: dict[str, str] = {}
        self._found: dict[str, bool] = {}
        self._facts: dict[str, dict[tuple, FindingFacts]] = {}  # matching method -> decisive fields -> facts

    def collapsed(self, quote: str) -> str:
        cached = self._collapsed.get(quote)
        if cached is None:
            cached = self._collapsed[quote] = collapse(quote)
        return cached

    def found(self, quote: str) -> bool:
        """Whether the quote stands verbatim in the document, after whitespace collapsing."""
        cached = self._found.get(quote)
        if cached is None:
            needle = self.collapsed(quote)
            cached = self._found[quote] = not quotes_nothing(needle) and needle in self.text.collapsed
        return cached

    def facts_of(self, findings: tuple[m.Finding, ...], method: MatchingMethod) -> list[FindingFacts]:
        """Each finding's facts, kept by the fields that decide them, so a finding repeated in another repetition or stage is
        looked up: one lookup per finding, in a table of the matching method's own."""
        known = self._facts.get(method.id)
        if known is None:
            known = self._facts[method.id] = {}
        found = []
        for finding in findings:
            decisive = (finding.kind, finding.rule, finding.missing, finding.quote, finding.location)
            facts = known.get(decisive)
            if facts is None:
                facts = known[decisive] = FindingFacts(
                    _matches(self, finding, self.expected_by_identity, method),
                    next(iter(_matches(self, finding, self.prohibited_by_identity, method)), None),
                    _voluntary(self, finding, self.case_version.key.voluntary, method),
                    None if finding.quote is None else self.found(finding.quote),
                )
            found.append(facts)
        return found


class FindingFacts(NamedTuple):
    """What a finding's kind, primary rule, missing flag and evidence decide on their own, whatever else the answer holds."""

    expected: tuple[tuple[int, str], ...]  # (index, evidence) of every expected finding it matches, in key order
    prohibited: tuple[int, str] | None  # (index, evidence) of the first prohibited finding it matches, in key order
    voluntary: bool  # a strength the key allows
    quote_found: bool | None  # None when the finding has no quote


def evidence(ctx: CaseContext, finding: m.Finding, passage: m.Passage | None, method: MatchingMethod) -> str | None:
    """How the finding points at the passage (exact, contained, location, absent), or None when it does not."""
    if passage is None:
        return m.NO_EVIDENCE if finding.quote is None and finding.location is None else None
    if finding.quote is not None:
        quote = ctx.collapsed(finding.quote)
        wanted = ctx.passage_text(passage)
        if quote == wanted:
            return m.EXACT
        first, last = passage.lines
        # "stays on the same line": the collapsed quote stands in that line's own collapsed text, so it reaches into neither line break
        if method.allow_contained and first == last and wanted in quote and quote in ctx.line_text(first):
            return m.CONTAINED
    if finding.location is not None and finding.location == passage.lines:
        return m.LOCATION
    return None


Identity = tuple[str, str, bool]  # (kind, primary rule, missing flag): conditions 1-3 of a match


def _by_identity(targets: tuple[m.KeyFinding, ...]) -> dict[Identity, tuple[tuple[int, m.KeyFinding], ...]]:
    """Key findings (with their index, in key order) under every (kind, accepted rule, missing flag) that meets conditions 1-3."""
    index: dict[Identity, list[tuple[int, m.KeyFinding]]] = {}
    for i, target in enumerate(targets):
        for rule in dict.fromkeys(target.rules):
            index.setdefault((target.kind, rule, target.missing), []).append((i, target))
    return {identity: tuple(entries) for identity, entries in index.items()}


def _matches(ctx: CaseContext, finding: m.Finding, index, method: MatchingMethod) -> tuple[tuple[int, str], ...]:
    """(index, evidence) of every key finding the finding matches, in key order: all four conditions hold.

    1. kind, 2. primary rule among the accepted ones, 3. missing flag: the finding's identity looked up in the index;
    4. evidence: tested only on what the lookup gives, being the dearest.
    """
    found = []
    for i, target in index.get((finding.kind, finding.rule, finding.missing), ()):
        how = evidence(ctx, finding, target.passage, method)
        if how is not None:
            found.append((i, how))
    return tuple(found)


def judge_stage(ctx: CaseContext, findings: tuple[m.Finding, ...], method: MatchingMethod) -> m.StageVerdict:
    """Put every finding of one stage in exactly one category and say how each expected finding fared."""
    key = ctx.case_version.key
    if not findings:  # nothing reported: every expected finding missed with nothing near it (a verdict of its own per stage)
        return _new(m.StageVerdict, ((), ctx.nothing_found))
    expected, expected_ids = key.expected, ctx.expected_ids
    facts = ctx.facts_of(findings, method)
    edges, assignment = _edges_and_assignment(facts)
    matched_expected = {ei: fi for fi, (ei, _) in assignment.items()}

    verdicts = []
    for fi, finding in enumerate(findings):
        targets, prohibited, voluntary, quote_found = facts[fi]
        if targets:  # most findings match no expected finding: only those that do are looked up in the assignment
            got = assignment.get(fi)
            if got is not None:
                verdicts.append(_new(_FindingVerdict, (finding, m.MATCHED, expected_ids[got[0]], got[1], quote_found, ())))
                continue
            # a duplicate of every expected finding it would match that another finding took, not only the first
            taken = [(ei, found) for ei, found in targets if ei in matched_expected]
            if taken:
                ei, found = taken[0]
                verdicts.append(_new(_FindingVerdict, (finding, m.DUPLICATE, expected_ids[ei], found, quote_found,
                                                       tuple([expected_ids[i] for i, _ in taken]))))
                continue
        if prohibited is not None:
            pi, found = prohibited
            verdicts.append(_new(_FindingVerdict, (finding, m.PROHIBITED, key.prohibited[pi].id, found, quote_found, ())))
            continue
        verdicts.append(_new(_FindingVerdict, (finding, m.VOLUNTARY if voluntary else m.UNEXPECTED, None, None, quote_found, ())))

    expected_verdicts = []
    for ei, target in enumerate(expected):
        fi = matched_expected.get(ei)
        if fi is not None:
            expected_verdicts.append(_new(_ExpectedVerdict, (target, findings[fi].id, assignment[fi][1], None, None)))
        else:
            reason, closest = _why_missed(ctx, findings, target, method)
            expected_verdicts.append(_new(_ExpectedVerdict, (target, None, None, reason, closest)))
    return _new(m.StageVerdict, (tuple(verdicts), tuple(expected_verdicts)))


# verdicts are named tuples built millions of times: made from their fields in order by tuple's own constructor, which
# skips the Python-level __new__ every named tuple has (checked below: the field orders these calls rely on)
_new = tuple.__new__
_FindingVerdict, _ExpectedVerdict = m.FindingVerdict, m.ExpectedVerdict
assert m.FindingVerdict._fields == ("finding", "category", "key_finding", "evidence", "quote_found", "duplicate_of")
assert m.ExpectedVerdict._fields == ("expected", "finding", "evidence", "reason", "closest")
assert m.StageVerdict._fields == ("findings", "expected")


def _voluntary(ctx: CaseContext, finding: m.Finding, allowed: tuple[m.VoluntaryStrength, ...], method: MatchingMethod) -> bool:
    if finding.kind != m.STRENGTH:
        return False
    for strength in allowed:
        if strength.rule != finding.rule:
            continue
        if strength.passage is None or evidence(ctx, finding, strength.passage, method) is not None:
            return True
    return False


_CONDITION_ORDER = ("kind", "rule", "missing", "evidence")


def _why_missed(ctx, findings, target, method) -> tuple[str, str | None]:
    """The condition that broke for the finding that came closest, or "nothing" when no finding came near."""
    best: tuple[int, int] | None = None
    best_reason, best_id = "nothing", None
    for fi, finding in enumerate(findings):
        found = evidence(ctx, finding, target.passage, method)
        same_rule = finding.rule in target.rules
        if not same_rule and found is None:
            continue  # neither the rule nor the passage: not an attempt at this expected finding
        broken = [
            name
            for name, ok in (
                ("kind", finding.kind == target.kind),
                ("rule", same_rule),
                ("missing", finding.missing == target.missing),
                ("evidence", found is not None),
            )
            if not ok
        ]
        score = (len(broken), fi)
        if best is None or score < best:
            best = score
            reason = broken[0] if broken else "taken"
            if reason == "rule" and any(r in target.rules for r in finding.supporting_rules):
                reason = "rule.support"
            best_reason, best_id = reason, finding.id
    return best_reason, best_id
