"""Matching rules of METHOD.md ("Matching a finding to an expected finding"), one table row per edge case."""

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from sitegen.core import model as m
from sitegen.score.matching import METHODS, CaseContext, judge_stage
from sitegen.core.text import DocumentText, collapse

from factories import case_version, expected, finding

V5, V6 = METHODS[5], METHODS[6]


def judge(key_expected, findings, *, method=V6, prohibited=(), voluntary=()):
    cv = case_version(expected_findings=key_expected, prohibited=prohibited, voluntary=voluntary)
    return judge_stage(CaseContext(cv), tuple(findings), method)


# (name, expected finding, finding, method, category of the finding, evidence, reason the expected finding was missed)
CASES = [
    ("exact quote", expected(), finding(), V6, m.MATCHED, m.EXACT, None),
    ("wider quote, same line (v6)", expected(), finding(quote="Läckan är åtgärdad. Åtgärden utfördes"), V6, m.MATCHED, m.CONTAINED, None),
    ("wider quote, same line (v5 knows exact only)", expected(), finding(quote="Läckan är åtgärdad. Åtgärden utfördes"), V5,
     m.UNEXPECTED, None, "evidence"),
    ("wider quote across a line break", expected(),
     finding(quote="vid ventil V3.\nLäckan är åtgärdad."), V6, m.UNEXPECTED, None, "evidence"),
    ("tabs and line breaks inside the quote collapse", expected(quote="Läckan är åtgärdad. Åtgärden utfördes av driftpersonalen samma dag."),
     finding(quote="Läckan\tär  åtgärdad.\nÅtgärden utfördes av\r\ndriftpersonalen samma dag."), V6, m.MATCHED, m.EXACT, None),
    ("case differs: no folding", expected(), finding(quote="läckan är åtgärdad."), V6, m.UNEXPECTED, None, "evidence"),
    ("punctuation differs: no stripping", expected(), finding(quote="Läckan är åtgärdad"), V6, m.UNEXPECTED, None, "evidence"),
    ("Unicode form differs: no normalisation", expected(), finding(quote="La\u0308ckan är åtgärdad."), V6, m.UNEXPECTED, None, "evidence"),
    ("accepted rule only as support", expected(), finding(rule="R-2", supporting=("R-1",)), V6, m.UNEXPECTED, None, "rule.support"),
    ("rule the key does not accept", expected(), finding(rule="R-2"), V6, m.UNEXPECTED, None, "rule"),
    ("a strength where a flaw is expected", expected(), finding(kind="strength"), V6, m.UNEXPECTED, None, "kind"),
    ("missing flag differs", expected(), finding(missing=False), V6, m.UNEXPECTED, None, "missing"),
    ("expected absence answered with a quote", expected(no_passage=True), finding(quote="Plomberna undersöktes."), V6,
     m.UNEXPECTED, None, "evidence"),
    ("expected absence answered with a location", expected(no_passage=True), finding(quote=None, location=(6, 6)), V6,
     m.UNEXPECTED, None, "evidence"),
    ("expected absence answered with nothing quoted", expected(no_passage=True), finding(quote=None), V6, m.MATCHED, m.NO_EVIDENCE, None),
    ("location instead of a quote", expected(), finding(quote=None, location=(4, 4)), V6, m.MATCHED, m.LOCATION, None),
    ("location on another line", expected(), finding(quote=None, location=(3, 4)), V6, m.UNEXPECTED, None, "evidence"),
    ("location wider than the passage's lines", expected(), finding(quote=None, location=(4, 5)), V6, m.UNEXPECTED, None, "evidence"),
    ("no evidence for a passage", expected(), finding(quote=None), V6, m.UNEXPECTED, None, "evidence"),
    ("passage given by lines only, quote equals the line", expected(quote=None, lines=(6, 6)), finding(quote="Plomberna undersöktes."),
     V6, m.MATCHED, m.EXACT, None),
]


@pytest.mark.parametrize("name,key,found,method,category,evidence,reason", CASES, ids=[c[0] for c in CASES])
def test_matching_table(name, key, found, method, category, evidence, reason):
    verdict = judge([key], [found], method=method)
    assert verdict.findings[0].category == category
    assert verdict.findings[0].evidence == evidence
    assert verdict.expected[0].reason == reason
    assert (verdict.expected[0].finding is None) == (reason is not None)


def test_wording_never_takes_part():
    well_written = finding(quote="Plomberna undersöktes.", wording="Utmärkt och precis analys av exakt rätt brist: läckan.")
    verdict = judge([expected()], [well_written])
    assert verdict.expected[0].finding is None
    # the rule is named but another passage quoted: the wording, however good, does not rescue it
    assert verdict.expected[0].reason == "evidence"
    assert verdict.findings[0].category == m.UNEXPECTED


def test_two_findings_on_one_passage_one_is_a_duplicate():
    verdict = judge([expected()], [finding("f1"), finding("f2")])
    assert [v.category for v in verdict.findings] == [m.MATCHED, m.DUPLICATE]
    assert verdict.findings[1].key_finding == "e1"


def test_assignment_is_maximum_not_greedy():
    # f1 could take e1 or e2; f2 only e1. A greedy pass would give f1->e1 and leave e2 unmatched.
    e1 = expected("e1", rules=("R-1", "R-2"))
    e2 = expected("e2", rules=("R-1",), quote="Plomberna undersöktes.")
    f1 = finding("f1", quote=None, location=None, rule="R-1")
    f1 = m.Finding("f1", "flaw", "R-1", (), True, "Läckan är åtgärdad.", (6, 6), "", ())
    f2 = finding("f2", rule="R-2")
    verdict = judge([e1, e2], [f1, f2])
    assert {v.finding.id: v.key_finding for v in verdict.findings} == {"f1": "e2", "f2": "e1"}
    assert all(v.category == m.MATCHED for v in verdict.findings)


def test_tie_prefers_exact_over_contained():
    contained = finding("f1", quote="Läckan är åtgärdad. Åtgärden utfördes")
    exact = finding("f2")
    verdict = judge([expected()], [contained, exact])
    by_id = {v.finding.id: v for v in verdict.findings}
    assert by_id["f2"].category == m.MATCHED and by_id["f2"].evidence == m.EXACT
    assert by_id["f1"].category == m.DUPLICATE


def test_of_several_findings_on_one_passage_the_first_exact_one_is_matched():
    contained = finding("f1", quote="Läckan är åtgärdad. Åtgärden utfördes")
    located = finding("f4", quote=None, location=(4, 4))
    verdict = judge([expected()], [contained, finding("f2"), finding("f3"), located])
    assert [(v.finding.id, v.category, v.evidence) for v in verdict.findings] == [
        ("f1", m.DUPLICATE, m.CONTAINED), ("f2", m.MATCHED, m.EXACT), ("f3", m.DUPLICATE, m.EXACT), ("f4", m.DUPLICATE, m.LOCATION)]


@pytest.mark.parametrize("exact_ones", [1, 11, 12, 40])
def test_an_exact_match_wins_over_a_contained_one_however_many_findings_point_at_the_passage(exact_ones):
    """METHOD.md: prefer exact over contained matches. The answer's length must not change which finding is matched."""
    contained = finding("f0", quote="Läckan är åtgärdad. Åtgärden utfördes")
    verdict = judge([expected()], [contained, *(finding(f"f{i}") for i in range(1, exact_ones + 1))])
    assert [(v.finding.id, v.category, v.evidence) for v in verdict.findings][:2] == [
        ("f0", m.DUPLICATE, m.CONTAINED), ("f1", m.MATCHED, m.EXACT)]
    assert all(v.category == m.DUPLICATE for v in verdict.findings[2:])


def test_most_matches_wins_even_over_exact_quotes():
    # f1 quotes e1's passage exactly and is wider than e2's (contained); f2 only reaches e1, and only as a contained match.
    # Giving f1 its exact match would leave e2 unmatched: the maximum matching pairs f1-e2 and f2-e1, both contained.
    e1 = expected("e1", rules=("R-1", "R-2"), quote="Läckan är åtgärdad.")
    e2 = expected("e2", rules=("R-1",), quote="är åtgärdad.")
    f1 = finding("f1", rule="R-1", quote="Läckan är åtgärdad.")
    f2 = finding("f2", rule="R-2", quote="Läckan är åtgärdad. Åtgärden utfördes")
    verdict = judge([e1, e2], [f1, f2])
    assert [(v.finding.id, v.category, v.key_finding, v.evidence) for v in verdict.findings] == [
        ("f1", m.MATCHED, "e2", m.CONTAINED), ("f2", m.MATCHED, "e1", m.CONTAINED)]


def test_between_equally_large_assignments_the_one_with_more_exact_matches_wins():
    # Both assignments match both expected findings; f1 is contained in e1's passage but exact on e2's, f2 points by location.
    e1 = expected("e1", quote="är åtgärdad.")
    e2 = expected("e2", quote="Läckan är åtgärdad.")
    f1 = finding("f1", quote="Läckan är åtgärdad.")
    f2 = finding("f2", quote=None, location=(4, 4))
    verdict = judge([e1, e2], [f1, f2])
    assert [(v.finding.id, v.key_finding, v.evidence) for v in verdict.findings] == [("f1", "e2", m.EXACT), ("f2", "e1", m.LOCATION)]


def test_tie_goes_to_the_earlier_expected_finding_in_the_key():
    # one location on line 4 points at both passages there: the earlier key entry takes it, the later one is missed
    e1 = expected("e1", quote="Läckan är åtgärdad.")
    e2 = expected("e2", quote="Åtgärden utfördes av driftpersonalen samma dag.")
    verdict = judge([e1, e2], [finding("f1", quote=None, location=(4, 4))])
    assert verdict.findings[0].key_finding == "e1"
    assert [(v.expected.id, v.finding) for v in verdict.expected] == [("e1", "f1"), ("e2", None)]


def test_tie_goes_to_the_earlier_finding():
    verdict = judge([expected()], [finding("b"), finding("a")])
    assert [(v.finding.id, v.category) for v in verdict.findings] == [("b", m.MATCHED), ("a", m.DUPLICATE)]


def test_category_order_matched_before_prohibited():
    # a finding that matches both an expected and a prohibited finding is matched (categories are decided in order)
    key = expected(rules=("R-1", "R-2"))
    trap = expected("p1", rules=("R-1",))
    trap = m.KeyFinding("p1", "flaw", ("R-1",), True, key.passage, True)
    verdict = judge([key], [finding()], prohibited=[trap])
    assert verdict.findings[0].category == m.MATCHED


def test_category_order_duplicate_before_prohibited():
    # the second finding would match the already matched expected finding and also a prohibited one: it is a duplicate
    key = expected(rules=("R-1", "R-2"))
    trap = m.KeyFinding("p1", "flaw", ("R-1",), True, key.passage, True)
    verdict = judge([key], [finding("f1"), finding("f2")], prohibited=[trap])
    assert [(v.category, v.key_finding) for v in verdict.findings] == [(m.MATCHED, "e1"), (m.DUPLICATE, "e1")]


def test_category_order_prohibited_before_voluntary():
    # a strength the key allows by rule is still prohibited when it matches a prohibited finding
    praise = m.KeyFinding("praise", "strength", ("R-1",), False, expected(quote="Plomberna undersöktes.").passage, True)
    allowed = m.VoluntaryStrength("R-1", None)
    lured = finding("p", kind="strength", missing=False, quote="Plomberna undersöktes.")
    verdict = judge([], [lured], prohibited=[praise], voluntary=[allowed])
    assert (verdict.findings[0].category, verdict.findings[0].key_finding) == (m.PROHIBITED, "praise")


def test_prohibited_voluntary_and_unexpected():
    praise = m.KeyFinding("praise", "strength", ("R-1",), False, expected(quote="Plomberna undersöktes.").passage, True)
    allowed = m.VoluntaryStrength("R-2", None)
    findings = [
        finding("p", kind="strength", missing=False, quote="Plomberna undersöktes."),
        finding("v", kind="strength", rule="R-2", missing=False, quote="Objekt: Pumpstation Norra, Kalmar kommun."),
        finding("u", kind="flaw", rule="R-2", missing=False, quote="Provet togs ur kranen i pumphallen."),
    ]
    verdict = judge([], findings, prohibited=[praise], voluntary=[allowed])
    assert [v.category for v in verdict.findings] == [m.PROHIBITED, m.VOLUNTARY, m.UNEXPECTED]
    assert verdict.findings[0].key_finding == "praise"


def test_voluntary_strength_bound_to_a_passage():
    allowed = m.VoluntaryStrength("R-2", expected(quote="Plomberna undersöktes.").passage)
    elsewhere = finding("s", kind="strength", rule="R-2", missing=False, quote="Provet togs ur kranen i pumphallen.")
    there = finding("t", kind="strength", rule="R-2", missing=False, quote="Plomberna undersöktes.")
    verdict = judge([], [elsewhere, there], voluntary=[allowed])
    assert [v.category for v in verdict.findings] == [m.UNEXPECTED, m.VOLUNTARY]


def test_quote_found_is_recorded_per_finding():
    verdict = judge([], [finding("a"), finding("b", quote="Läckan är helt åtgärdad."), finding("c", quote=None)])
    assert [v.quote_found for v in verdict.findings] == [True, False, None]


def test_result_does_not_depend_on_key_order():
    e1 = expected("e1")
    e2 = expected("e2", quote="Plomberna undersöktes.", missing=False, kind="strength")
    findings = [finding("a"), finding("b", kind="strength", missing=False, quote="Plomberna undersöktes.")]
    one = judge([e1, e2], findings)
    two = judge([e2, e1], findings)
    assert {(v.finding.id, v.category, v.key_finding) for v in one.findings} == {(v.finding.id, v.category, v.key_finding) for v in two.findings}


WHITESPACE_HEAVY = st.text(alphabet=st.sampled_from(["a", "b", "å", " ", "\t", "\n", "\r", "\u00a0", "\f"]), max_size=40)


@given(text=WHITESPACE_HEAVY)
def test_collapse_is_the_whitespace_rule(text):
    assert collapse(text) == re.sub(r"[ \t\r\n]+", " ", text)


@given(document=WHITESPACE_HEAVY, data=st.data())
def test_occurrences_give_the_lines_a_character_by_character_map_gives(document, data):
    start = data.draw(st.integers(0, len(document)))
    quote = data.draw(st.one_of(st.just(document[start:data.draw(st.integers(start, len(document)))]), WHITESPACE_HEAVY))
    # the rule spelled out: each collapsed character stands for the first original character of what it replaced
    lines, line, collapsed_lines = [], 1, []
    for match in re.finditer(r"[ \t\r\n]+|[^ \t\r\n]", document):
        collapsed_lines.append(line)
        line += match.group().count("\n")
    collapsed = collapse(document)
    needle = collapse(quote)
    if needle.strip(" "):  # only spaces, tabs and line breaks are whitespace to METHOD.md
        at = collapsed.find(needle)
        while at != -1:
            lines.append((collapsed_lines[at], collapsed_lines[at + len(needle) - 1]))
            at = collapsed.find(needle, at + 1)
    assert DocumentText(document).occurrences(quote) == tuple(lines)

