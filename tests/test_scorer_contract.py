"""METHOD.md's Decisions of 2026-12-01: the line a quote stays on, duplicates of several expected findings, the assignment
order at any size, and scorer 7's invariance pairs."""

from itertools import product

from hypothesis import given
from hypothesis import strategies as st

from sitegen.core import model as m
from sitegen.score.assignment import _contenders, _edges_and_assignment
from sitegen.score.matching import METHODS, CaseContext, FindingFacts, _RANK, _assign, judge_stage
from sitegen.score.scoring import score_run

from factories import case_version, engine, expected, finding, records

DOC = "Läckan är åtgärdad.\nProvet togs ur kranen.\nAvgiften är 40 kr."
V6, V7 = METHODS[6], METHODS[7]


def judged(key, findings, *, document=DOC, method=V6):
    cv = case_version(expected_findings=key, document=document)
    return judge_stage(CaseContext(cv), tuple(findings), method)


# --- 1. "stays on the same line": within the line's own text, at both ends alike -----------------------------------


def test_a_quote_reaching_into_the_line_break_after_the_line_is_not_on_it():
    key = [expected(quote="Läckan är åtgärdad.", document=DOC)]
    for quote in ("Läckan är åtgärdad.\n", "Läckan är åtgärdad. "):
        verdict = judged(key, [finding(quote=quote)])
        assert verdict.findings[0].category == m.UNEXPECTED, quote
        assert verdict.expected[0].reason == "evidence"


def test_a_quote_reaching_into_the_line_break_before_the_line_is_not_on_it():
    key = [expected(quote="Provet togs ur kranen.", document=DOC)]
    verdict = judged(key, [finding(quote="\nProvet togs ur kranen.")])
    assert verdict.findings[0].category == m.UNEXPECTED


def test_a_wider_quote_within_the_line_is_contained_and_trailing_spaces_of_the_line_belong_to_it():
    document = "Läckan är åtgärdad.  \nProvet togs ur kranen."
    key = [expected(quote="Läckan", document=document)]
    for quote in ("Läckan är åtgärdad.", "Läckan är åtgärdad. "):
        verdict = judged(key, [finding(quote=quote)], document=document)
        assert (verdict.findings[0].category, verdict.findings[0].evidence) == (m.MATCHED, m.CONTAINED), quote


# --- 2. a duplicate of every expected finding another finding took ----------------------------------------------


def two_absences():
    return [expected("e1", rules=("R-1", "R-2"), no_passage=True), expected("e2", rules=("R-1", "R-2"), no_passage=True)]


def absent(id, rule, trace=()):
    return finding(id, rule=rule, quote=None, trace=trace)


def test_a_duplicate_is_recorded_as_a_duplicate_of_every_expected_finding_it_would_match():
    verdict = judged(two_absences(), [absent("a1", "R-1"), absent("a2", "R-1"), absent("b1", "R-2")])
    b1 = verdict.findings[2]
    assert (b1.category, b1.key_finding, b1.duplicate_of) == (m.DUPLICATE, "e1", ("e1", "e2"))


def survival(scorer, reviewers, report):
    cv = case_version("cv", expected_findings=two_absences())
    answer = engine(reviewers=tuple(m.Reviewer(rid, tuple(fs)) for rid, fs in reviewers), report=report)
    result = score_run(records([cv], {("cv", 1): (answer, None)}, merge=True, scorer=scorer), "run")
    measure = next(x for x in result.measures if x.measure == "REDUCER_SURVIVAL")
    return measure, [o for o in result.observations if o.measure == "REDUCER_SURVIVAL"]


def test_from_scorer_7_a_flaw_survives_through_a_reviewer_duplicate_of_its_expected_finding():
    reviewers = [("reviewer-1", [absent("a1", "R-1"), absent("a2", "R-1")]), ("reviewer-2", [absent("b1", "R-2")])]
    report = [absent("m1", "R-1", trace=("a1",)), absent("m2", "R-2", trace=("b1",))]
    measure, failed = survival(7, reviewers, report)
    assert (measure.passed, measure.observed) == (2, 2), failed
    # scorer 6 keeps what it recorded: the duplicate counted for its first expected finding only
    measure, failed = survival(6, reviewers, report)
    assert (measure.passed, measure.observed) == (1, 2)
    assert [(o.subject, o.reason) for o in failed] == [("e2", "changed.rule")]


# --- 3. no size limit changes the assignment --------------------------------------------------------------------


def test_eight_findings_for_two_expected_findings_follow_the_order():
    findings = [absent("a1", "R-1"), absent("a2", "R-2")] + [absent(f"a{i}", "R-1") for i in range(3, 9)]
    verdict = judged(two_absences(), findings)  # 3**8 = 6,561 candidate assignments
    assert {v.finding.id: v.key_finding for v in verdict.findings if v.category == m.MATCHED} == {"a1": "e1", "a2": "e2"}


def test_eight_findings_for_two_expected_findings_survive_the_merge_as_assigned():
    findings = [absent("a1", "R-1"), absent("a2", "R-2")] + [absent(f"a{i}", "R-1") for i in range(3, 9)]
    report = [absent("m1", "R-1", trace=("a1",)), absent("m2", "R-2", trace=("a2",))]
    measure, failed = survival(6, [("reviewer-1", findings)], report)
    assert (measure.passed, measure.observed) == (2, 2), failed


def exhaustive(edges):
    """The METHOD.md order by brute force: every assignment, ranked by (-matches, -exact, findings' choices in order)."""
    members = sorted(edges)
    options = [[None] + sorted(edges[fi]) for fi in members]
    best_score, best = None, {}
    for choice in product(*options):
        used = [c[0] for c in choice if c is not None]
        if len(used) != len(set(used)):
            continue
        exact = sum(1 for c in choice if c is not None and _RANK[c[1]] == 0)
        score = (-len(used), -exact, tuple((0, c[0]) if c is not None else (1, 0) for c in choice))
        if best_score is None or score < best_score:
            best_score, best = score, {fi: c for fi, c in zip(members, choice) if c is not None}
    return best


EDGE = st.tuples(st.integers(0, 3), st.sampled_from([m.EXACT, m.CONTAINED, m.LOCATION, m.NO_EVIDENCE]))


@given(st.lists(st.lists(EDGE, max_size=4, unique_by=lambda e: e[0]), min_size=1, max_size=6))
def test_the_assignment_is_the_one_the_exhaustive_search_ranks_first(rows):
    edges = {fi: tuple(sorted(row)) for fi, row in enumerate(rows) if row}
    assert _assign(edges) == exhaustive(edges)


@given(st.lists(st.lists(EDGE, min_size=1, max_size=3, unique_by=lambda e: e[0]), min_size=1, max_size=3),
       st.lists(st.integers(0, 2), min_size=2, max_size=7))
def test_an_engine_repeating_findings_gets_the_assignment_the_exhaustive_search_ranks_first(kinds, order):
    # findings with the same edges, repeated more often than there are expected findings to take, in any order: only the
    # first of each kind can hold one, so the search ranks the first few and leaves the rest as the duplicates they are
    edges = {fi: tuple(sorted(kinds[pick % len(kinds)])) for fi, pick in enumerate(order)}
    assert _assign(edges) == exhaustive(edges)


def test_of_findings_with_the_same_edges_only_as_many_as_there_are_expected_findings_contend():
    row = ((0, m.CONTAINED), (1, m.CONTAINED))
    other = ((0, m.EXACT), (1, m.CONTAINED))
    edges = {fi: row for fi in range(40_000)}
    edges[40_000] = other
    assert _contenders(sorted(edges), edges, 2) == [0, 1, 40_000]
    assert _assign(edges) == {40_000: (0, m.EXACT), 0: (1, m.CONTAINED)}


@given(st.lists(st.lists(EDGE, max_size=4, unique_by=lambda e: e[0]), min_size=1, max_size=6))
def test_the_one_pass_assignment_is_the_one_the_exhaustive_search_ranks_first(rows):
    # judge_stage settles the usual answer (each finding matching at most one expected finding) in its one pass over the
    # facts: most matches, then most exact matches, then answer order, as for any answer
    facts = [FindingFacts(tuple(sorted(row)), None, False, None) for row in rows]
    edges, assignment = _edges_and_assignment(facts)
    assert edges == {fi: tuple(sorted(row)) for fi, row in enumerate(rows) if row}
    assert assignment == exhaustive(edges)


@given(st.lists(st.lists(EDGE, max_size=1), min_size=1, max_size=8))
def test_several_findings_for_one_expected_finding_go_to_the_first_exact_one_else_the_first(rows):
    facts = [FindingFacts(tuple(row), None, False, None) for row in rows]
    _, assignment = _edges_and_assignment(facts)
    for ei in {row[0][0] for row in rows if row}:
        members = [fi for fi, row in enumerate(rows) if row and row[0][0] == ei]
        exact = [fi for fi in members if _RANK[rows[fi][0][1]] == 0]
        assert [fi for fi in assignment if assignment[fi][0] == ei] == [(exact or members)[0]]


def test_a_large_tangled_group_is_assigned_in_order_and_fast():
    # 400 findings each able to take either of two expected findings, the exact ones late: most exact first, then order
    edges = {fi: ((0, m.CONTAINED), (1, m.CONTAINED)) for fi in range(398)}
    edges.update({398: ((0, m.EXACT), (1, m.CONTAINED)), 399: ((1, m.EXACT),)})
    assert _assign(edges) == {398: (0, m.EXACT), 399: (1, m.EXACT)}


# --- 4. scorer 7: invariance pairs compare the unexpected findings, not their number --------------------------------


def pair(scorer, extra_a, extra_b):
    a = case_version("lic-f", expected_findings=[expected()], case="lic")
    b = case_version("lic-m", expected_findings=[expected()], case="lic")
    answers = {("lic-f", 1): (engine([finding("a"), extra_a]), None), ("lic-m", 1): (engine([finding("z"), extra_b]), None)}
    result = score_run(records([a, b], answers, pairs=[m.Pair("lic", "invariance", ("lic-f", "lic-m"), "pronoun", False)],
                               scorer=scorer), "run")
    return [o for o in result.observations if o.measure == "INVARIANT_PAIRS"], result


def test_from_scorer_7_two_different_unexpected_findings_make_a_pair_read_differently():
    one = finding("u", rule="R-2", missing=False, quote="Provet togs ur kranen i pumphallen.")
    other = finding("v", kind="strength", rule="R-2", missing=False, quote="Plomberna undersöktes.")
    failed, result = pair(7, one, other)
    assert [(o.result, o.reason) for o in failed] == [(m.FAILED, "unexpected")]
    assert "flaw R-2 (missing=false)" in failed[0].detail and "strength R-2 (missing=false)" in failed[0].detail
    failed, result = pair(6, one, other)
    assert failed == [] and next(x for x in result.measures if x.measure == "INVARIANT_PAIRS").passed == 1


def test_from_scorer_7_the_same_unexpected_finding_at_another_place_reads_alike():
    one = finding("u", rule="R-2", missing=False, quote="Provet togs ur kranen i pumphallen.")
    same_elsewhere = finding("v", rule="R-2", missing=False, quote="Plomberna undersöktes.")
    failed, result = pair(7, one, same_elsewhere)
    assert failed == [] and next(x for x in result.measures if x.measure == "INVARIANT_PAIRS").passed == 1


# --- 5. found by the independent reading (test_oracle.py) ---------------------------------------------------------
# METHOD.md: the collapsed text of a passage's line is "that line's characters without its line break", and a quote
# "that reaches into the line break before or after the line ... does not stay on it". In a document with "\r\n" line
# breaks the scorer took a passage given by lines with its carriage return (collapsed to a trailing space): the line's
# own text then missed, and a quote reaching into the line break was an exact match.


def test_a_passage_by_lines_in_a_crlf_document_is_the_lines_without_their_line_breaks():
    document = "Läckan är åtgärdad.\r\nProvet togs ur kranen.\r\nAvgiften är 40 kr."
    for lines in ((1, 1), (1, 2)):
        key = [expected(quote=None, lines=lines, document=document)]
        text = " ".join(["Läckan är åtgärdad.", "Provet togs ur kranen."][:lines[1]])
        verdict = judged(key, [finding(quote=text)], document=document, method=V7)
        assert (verdict.findings[0].category, verdict.findings[0].evidence) == (m.MATCHED, m.EXACT), lines
        verdict = judged(key, [finding(quote=text + "\r")], document=document, method=V7)
        assert verdict.findings[0].category == m.UNEXPECTED, lines
