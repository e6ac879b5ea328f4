"""The one-to-one assignment of a stage's findings to the expected findings they match, in the order METHOD.md ranks them."""

from __future__ import annotations

from typing import Sequence

from sitegen.core import model as m

# How far an edge's evidence goes; lower is better ("prefer exact over contained").
_RANK = {m.EXACT: 0, m.LOCATION: 0, m.NO_EVIDENCE: 0, m.CONTAINED: 1}


def _edges_and_assignment(facts: Sequence[tuple]) -> tuple[dict[int, tuple[tuple[int, str], ...]], dict[int, tuple[int, str]]]:
    """Each finding's edges to the expected findings it matches (its FindingFacts' first field), and _assign's assignment
    of them, in one pass.

    The usual answer has each finding match at most one expected finding: then the findings for one expected finding are
    settled here as _best_assignment settles a component of them, the first exact one taking it, else the first one (the
    others are duplicates), with no components to build. Only a finding matching several sends the edges to _assign.
    """
    edges: dict[int, tuple[tuple[int, str], ...]] = {}
    winner: dict[int, int] = {}  # expected finding -> the finding that takes it, while every finding has one target
    tangled = False
    for fi, fact in enumerate(facts):
        targets = fact[0]
        if targets:
            edges[fi] = targets
            if tangled:
                continue
            if len(targets) != 1:
                tangled = True
                continue
            ei = targets[0][0]
            held = winner.get(ei)
            if held is None or (_RANK[edges[held][0][1]] != 0 and _RANK[targets[0][1]] == 0):
                winner[ei] = fi
    if tangled:
        return edges, _assign(edges)
    return edges, {fi: edges[fi][0] for fi in winner.values()}


def _assign(edges: dict[int, tuple[tuple[int, str], ...]]) -> dict[int, tuple[int, str]]:
    """A maximum one-to-one assignment; ties go to more exact matches, then earlier findings, then earlier key entries."""
    if len(edges) == len({targets[0][0] for targets in edges.values() if len(targets) == 1}):
        # the usual answer: each finding matches one expected finding, and no two the same one: nothing to choose
        return {fi: targets[0] for fi, targets in edges.items()}
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
        # several findings for one expected finding (the others are duplicates): the first exact one, else the first
        winner = next((fi for fi in members if _RANK[edges[fi][0][1]] == 0), members[0])
        return {winner: edges[winner][0]}
    return _ranked_assignment(members, edges)


def _contenders(members: list[int], edges, k: int) -> list[int]:
    """The findings that can hold an expected finding in the best assignment: of those with the same edges (the same
    expected findings, by the same evidence), only the first k, in answer order.

    Were a later one to hold an expected finding while an earlier one with the same edges held none, handing it to the
    earlier one would keep the matches and the exact ones and rank better by order; so those holding one are the first
    of their kind, and no more than k expected findings can be held. An engine repeating one finding ten thousand times
    is ranked as one repeating it k times, not by costs as long as the repetitions.
    """
    seen: dict[tuple, int] = {}
    kept = []
    for fi in members:
        row = edges[fi]
        count = seen.get(row, 0)
        if count < k:
            seen[row] = count + 1
            kept.append(fi)
    return kept


def _ranked_assignment(members: list[int], edges) -> dict[int, tuple[int, str]]:
    """The METHOD.md order as one minimum-cost assignment, found by successive shortest augmenting paths: polynomial in size.

    Each edge costs -SIZE - EXACT·[exact] - (k - j)·K**(n-1-p) for the p-th finding of n taking the j-th of the component's
    k expected findings (K = k + 1): a sum that ranks assignments by most matches, then most exact matches, then the
    digits (expected finding taken, or k for none) of the findings in answer order, as the exhaustive comparison of
    (-matches, -exact, order) does. Python's integers are exact at any size, and every assignment has its own cost, so
    the cheapest is unique and no tie-break is left to the search.
    """
    targets = sorted({ei for fi in members for ei, _ in edges[fi]})
    members = _contenders(members, edges, len(targets))
    k, n = len(targets), len(members)
    base = k + 1
    exact_weight = base ** n  # above any sum of order digits
    size_weight = exact_weight * (n + 2)  # above any difference in exact matches and order
    column = {ei: j for j, ei in enumerate(targets)}
    cost: list[dict[int, int]] = []
    for p, fi in enumerate(members):
        place = base ** (n - 1 - p)
        cost.append({column[ei]: -size_weight - (exact_weight if _RANK[found] == 0 else 0) - (k - column[ei]) * place
                     for ei, found in edges[fi]})
    finding_of: list[int | None] = [None] * k  # finding position holding each expected finding
    holds: list[int | None] = [None] * n  # expected column each finding holds
    while True:
        # cheapest residual path from a free finding to each expected finding (Bellman-Ford over the expected side: no
        # negative cycle exists in the residual graph of a minimum-cost assignment, so k rounds settle it)
        dist: list[int | None] = [None] * k
        via: list[int | None] = [None] * k  # the finding that reaches the column on the cheapest path
        for p in range(n):
            if holds[p] is None:
                for j, c in cost[p].items():
                    if dist[j] is None or c < dist[j]:
                        dist[j], via[j] = c, p
        for _ in range(k):
            changed = False
            for j2 in range(k):
                p2 = finding_of[j2]
                if p2 is None or dist[j2] is None:
                    continue
                back = dist[j2] - cost[p2][j2]  # give up p2's column j2, then p2 takes another
                for j, c in cost[p2].items():
                    if j != j2 and (dist[j] is None or back + c < dist[j]):
                        dist[j], via[j] = back + c, p2
                        changed = True
            if not changed:
                break
        ends = [j for j in range(k) if finding_of[j] is None and dist[j] is not None and dist[j] < 0]
        if not ends:
            break
        j = min(ends, key=lambda j: dist[j])
        while j is not None:  # flip the path back to the free finding it started from
            p = via[j]
            previous = holds[p]
            holds[p], finding_of[j] = j, p
            j = previous
    return {members[p]: next(e for e in edges[members[p]] if column[e[0]] == j) for p, j in enumerate(holds) if j is not None}
