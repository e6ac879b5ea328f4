"""Structured matching of one stage's findings against the answer key: four conditions, one-to-one, deterministic."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product
from typing import NamedTuple

from . import model as m
from .text import DocumentText, collapse

# How far an edge's evidence goes; lower is better ("prefer exact over contained").
_RANK = {m.EXACT: 0, m.LOCATION: 0, m.NO_EVIDENCE: 0, m.CONTAINED: 1}
_SEARCH_LIMIT = 4096  # assignments tried per connected component before falling back to greedy


@dataclass(frozen=True)
class MatchingMethod:
    """A named, versioned variant of the matching rules; v5 knew exact quotes only."""

    version: int
    id: str
    allow_contained: bool


METHODS = {
    5: MatchingMethod(5, m.MATCHING_METHODS[5], allow_contained=False),
    6: MatchingMethod(6, m.MATCHING_METHODS[6], allow_contained=True),
}


def method_for(scorer_version: int) -> MatchingMethod:
    return METHODS[scorer_version]


class CaseContext:
    """What matching needs from one case version, prepared once and reused for every answer."""

    def __init__(self, case_version: m.CaseVersion):
        self.case_version = case_version
        self.text = DocumentText(case_version.document)
        self._passage_text: dict[tuple[str | None, tuple[int, int]], str] = {}
        self._collapsed: dict[str, str] = {}
        self._spans: dict[str, tuple[tuple[int, int], ...]] = {}
        self._found: dict[str, bool] = {}
        self._facts: dict[tuple, FindingFacts] = {}
        # conditions 1-3 (kind, primary rule, missing flag) as a key, so a finding meets only the key findings that pass them
        self.expected_by_identity = _by_identity(case_version.key.expected)
        self.prohibited_by_identity = _by_identity(case_version.key.prohibited)

    def passage_text(self, passage: m.Passage) -> str:
        # keyed by the passage's fields: hashing the frozen dataclass itself costs a Python call every time
        cache_key = (passage.quote, passage.lines)
        text = self._passage_text.get(cache_key)
        if text is None:
            raw = passage.quote if passage.quote is not None else self.text.lines_text(*passage.lines)
            text = self._passage_text[cache_key] = collapse(raw)
        return text

    def collapsed(self, quote: str) -> str:
        cached = self._collapsed.get(quote)
        if cached is None:
            cached = self._collapsed[quote] = collapse(quote)
        return cached

    def spans(self, quote: str) -> tuple[tuple[int, int], ...]:
        """The line spans (first, last) where the quote stands in the document."""
        cached = self._spans.get(quote)
        if cached is None:
            cached = self._spans[quote] = self.text.occurrences(quote)
        return cached

    def found(self, quote: str) -> bool:
        """Whether the quote stands verbatim in the document, after whitespace collapsing."""
        cached = self._found.get(quote)
        if cached is None:
            needle = self.collapsed(quote)
            cached = self._found[quote] = bool(needle.strip()) and needle in self.text.collapsed
        return cached

    def facts(self, finding: m.Finding, method: MatchingMethod) -> FindingFacts:
        """The finding's facts, kept by the fields that decide them, so a finding repeated in another repetition or stage is looked up."""
        decisive = (method.id, finding.kind, finding.rule, finding.missing, finding.quote, finding.location)
        known = self._facts.get(decisive)
        if known is None:
            known = self._facts[decisive] = FindingFacts(
                _matches(self, finding, self.expected_by_identity, method),
                next(iter(_matches(self, finding, self.prohibited_by_identity, method)), None),
                _voluntary(self, finding, self.case_version.key.voluntary, method),
                None if finding.quote is None else self.found(finding.quote),
            )
        return known


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
        if method.allow_contained and first == last and wanted in quote and (first, first) in ctx.spans(finding.quote):
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
    expected = key.expected
    facts = [ctx.facts(finding, method) for finding in findings]
    edges = {fi: fact.expected for fi, fact in enumerate(facts) if fact.expected}
    assignment = _assign(edges, len(findings)) if edges else {}
    matched_expected = {ei: fi for fi, (ei, _) in assignment.items()}

    verdicts = []
    for fi, (finding, fact) in enumerate(zip(findings, facts)):
        if fi in assignment:
            ei, found = assignment[fi]
            verdicts.append(m.FindingVerdict(finding, m.MATCHED, expected[ei].id, found, fact.quote_found))
            continue
        duplicate_of = next(((ei, found) for ei, found in fact.expected if ei in matched_expected), None) if fact.expected else None
        if duplicate_of is not None:
            ei, found = duplicate_of
            verdicts.append(m.FindingVerdict(finding, m.DUPLICATE, expected[ei].id, found, fact.quote_found))
            continue
        if fact.prohibited is not None:
            pi, found = fact.prohibited
            verdicts.append(m.FindingVerdict(finding, m.PROHIBITED, key.prohibited[pi].id, found, fact.quote_found))
            continue
        category = m.VOLUNTARY if fact.voluntary else m.UNEXPECTED
        verdicts.append(m.FindingVerdict(finding, category, None, None, fact.quote_found))

    expected_verdicts = []
    for ei, target in enumerate(expected):
        if ei in matched_expected:
            fi = matched_expected[ei]
            expected_verdicts.append(m.ExpectedVerdict(target, findings[fi].id, assignment[fi][1], None, None))
        else:
            reason, closest = _why_missed(ctx, findings, target, method)
            expected_verdicts.append(m.ExpectedVerdict(target, None, None, reason, closest))
    return m.StageVerdict(tuple(verdicts), tuple(expected_verdicts))


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


def _assign(edges: dict[int, tuple[tuple[int, str], ...]], n_findings: int) -> dict[int, tuple[int, str]]:
    """A maximum one-to-one assignment; ties go to more exact matches, then earlier findings, then earlier key entries."""
    result: dict[int, tuple[int, str]] = {}
    for members in _components(edges):
        if len(members) == 1 and len(edges[members[0]]) == 1:
            result[members[0]] = edges[members[0]][0]
            continue
        result.update(_best_assignment(members, edges))
    return result


def _components(edges: dict[int, tuple[tuple[int, str], ...]]) -> list[list[int]]:
    """The findings of each connected component of the bipartite graph, in finding order; findings sharing an expected finding meet."""
    # the usual answer: each finding matches at most one expected finding, so a component is one expected finding and its findings
    by_expected: dict[int, list[int]] = {}
    for fi in sorted(edges):
        if len(edges[fi]) != 1:
            return _tangled_components(edges)
        by_expected.setdefault(edges[fi][0][0], []).append(fi)
    return list(by_expected.values())


def _tangled_components(edges: dict[int, tuple[tuple[int, str], ...]]) -> list[list[int]]:
    """Components when some finding matches several expected findings: union-find over the expected findings."""
    parent: dict[int, int] = {}  # expected finding -> another in its component; the root points nowhere

    def root(ei: int) -> int:
        while ei in parent:
            ei = parent[ei]
        return ei

    for targets in edges.values():
        first = root(targets[0][0])
        for ei, _ in targets[1:]:
            other = root(ei)
            if other != first:
                parent[other] = first
    components: dict[int, list[int]] = {}
    for fi in sorted(edges):
        components.setdefault(root(edges[fi][0][0]), []).append(fi)
    return list(components.values())


def _best_assignment(members: list[int], edges) -> dict[int, tuple[int, str]]:
    if all(len(edges[fi]) == 1 for fi in members):
        # several findings for one expected finding (the others are duplicates): the search below would pick the first
        # exact one, else the first. Decided here however many findings there are, before the search limit below.
        winner = next((fi for fi in members if _RANK[edges[fi][0][1]] == 0), members[0])
        return {winner: edges[winner][0]}
    count = 1
    for fi in members:
        count *= len(edges[fi]) + 1
    if count > _SEARCH_LIMIT:
        return _greedy(members, edges)
    options = [[None] + sorted(edges[fi], key=lambda e: e[0]) for fi in members]
    best_score = None
    best: dict[int, tuple[int, str]] = {}
    for choice in product(*options):
        used = [c[0] for c in choice if c is not None]
        if len(used) != len(set(used)):
            continue
        size = len(used)
        exact = sum(1 for c in choice if c is not None and _RANK[c[1]] == 0)
        order = tuple((0, c[0]) if c is not None else (1, 0) for c in choice)
        score = (-size, -exact, order)
        if best_score is None or score < best_score:
            best_score = score
            best = {fi: c for fi, c in zip(members, choice) if c is not None}
    return best


def _greedy(members: list[int], edges) -> dict[int, tuple[int, str]]:
    """Kuhn's augmenting paths in finding order: still maximum, still deterministic, for unusually tangled answers."""
    owner: dict[int, int] = {}
    chosen: dict[int, tuple[int, str]] = {}

    def augment(fi: int, seen: set[int]) -> bool:
        for ei, found in sorted(edges[fi], key=lambda e: (_RANK[e[1]], e[0])):
            if ei in seen:
                continue
            seen.add(ei)
            if ei not in owner or augment(owner[ei], seen):
                owner[ei] = fi
                chosen[fi] = (ei, found)
                return True
        return False

    for fi in members:
        augment(fi, set())
    return {fi: chosen[fi] for fi in members if fi in chosen and owner.get(chosen[fi][0]) == fi}
