"""Structured matching of one stage's findings against the answer key: four conditions, one-to-one, deterministic."""

from __future__ import annotations

from dataclasses import dataclass
from itertools import product

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
        self._passage_text: dict[m.Passage, str] = {}
        self._collapsed: dict[str, str] = {}
        self._spans: dict[str, tuple[tuple[int, int], ...]] = {}
        self._found: dict[str, bool] = {}

    def passage_text(self, passage: m.Passage) -> str:
        text = self._passage_text.get(passage)
        if text is None:
            raw = passage.quote if passage.quote is not None else self.text.lines_text(*passage.lines)
            text = self._passage_text[passage] = collapse(raw)
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


def conditions(ctx: CaseContext, finding: m.Finding, target: m.KeyFinding, method: MatchingMethod) -> tuple[str | None, str | None]:
    """(evidence, first broken condition) for one finding against one key finding; evidence is looked at last, being dearest."""
    if finding.kind != target.kind:
        return None, "kind"
    if finding.rule not in target.rules:
        return None, "rule"
    if finding.missing != target.missing:
        return None, "missing"
    found = evidence(ctx, finding, target.passage, method)
    return (found, None) if found is not None else (None, "evidence")


def judge_stage(ctx: CaseContext, findings: tuple[m.Finding, ...], method: MatchingMethod) -> m.StageVerdict:
    """Put every finding of one stage in exactly one category and say how each expected finding fared."""
    key = ctx.case_version.key
    expected = key.expected
    edges: dict[int, list[tuple[int, str]]] = {}
    for fi, finding in enumerate(findings):
        for ei, target in enumerate(expected):
            found, broken = conditions(ctx, finding, target, method)
            if broken is None:
                edges.setdefault(fi, []).append((ei, found))
    assignment = _assign(edges, len(findings))
    matched_expected = {ei: fi for fi, (ei, _) in assignment.items()}

    verdicts = []
    for fi, finding in enumerate(findings):
        quote_found = None if finding.quote is None else ctx.found(finding.quote)
        if fi in assignment:
            ei, found = assignment[fi]
            verdicts.append(m.FindingVerdict(finding, m.MATCHED, expected[ei].id, found, quote_found))
            continue
        duplicate_of = next((ei for ei, _ in edges.get(fi, ()) if ei in matched_expected), None)
        if duplicate_of is not None:
            found = next(f for ei, f in edges[fi] if ei == duplicate_of)
            verdicts.append(m.FindingVerdict(finding, m.DUPLICATE, expected[duplicate_of].id, found, quote_found))
            continue
        prohibited = _first_match(ctx, finding, key.prohibited, method)
        if prohibited is not None:
            verdicts.append(m.FindingVerdict(finding, m.PROHIBITED, prohibited[0].id, prohibited[1], quote_found))
            continue
        if _voluntary(ctx, finding, key.voluntary, method):
            verdicts.append(m.FindingVerdict(finding, m.VOLUNTARY, None, None, quote_found))
            continue
        verdicts.append(m.FindingVerdict(finding, m.UNEXPECTED, None, None, quote_found))

    expected_verdicts = []
    for ei, target in enumerate(expected):
        if ei in matched_expected:
            fi = matched_expected[ei]
            expected_verdicts.append(m.ExpectedVerdict(target, findings[fi].id, assignment[fi][1], None, None))
        else:
            reason, closest = _why_missed(ctx, findings, target, method)
            expected_verdicts.append(m.ExpectedVerdict(target, None, None, reason, closest))
    return m.StageVerdict(tuple(verdicts), tuple(expected_verdicts))


def _first_match(ctx, finding, targets, method):
    for target in targets:
        found, broken = conditions(ctx, finding, target, method)
        if broken is None:
            return target, found
    return None


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


def _assign(edges: dict[int, list[tuple[int, str]]], n_findings: int) -> dict[int, tuple[int, str]]:
    """A maximum one-to-one assignment; ties go to more exact matches, then earlier findings, then earlier key entries."""
    # connected components of the bipartite graph; most are a single edge
    parent: dict[tuple[str, int], tuple[str, int]] = {}

    def find(x):
        while parent.setdefault(x, x) != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    for fi, targets in edges.items():
        for ei, _ in targets:
            parent[find(("f", fi))] = find(("e", ei))
    components: dict[tuple[str, int], list[int]] = {}
    for fi in sorted(edges):
        components.setdefault(find(("f", fi)), []).append(fi)
    result: dict[int, tuple[int, str]] = {}
    for members in components.values():
        if len(members) == 1 and len(edges[members[0]]) == 1:
            result[members[0]] = edges[members[0]][0]
            continue
        result.update(_best_assignment(members, edges))
    return result


def _best_assignment(members: list[int], edges) -> dict[int, tuple[int, str]]:
    options = [[None] + sorted(edges[fi], key=lambda e: e[0]) for fi in members]
    count = 1
    for option in options:
        count *= len(option)
    if count > _SEARCH_LIMIT:
        return _greedy(members, edges)
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
