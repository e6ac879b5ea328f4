"""The seven measures and the states of METHOD.md, each test built from the rule it names."""

from sitegen.core import model as m
import pytest

from sitegen.score.scoring import score_run

from factories import case_version, engine, expected, finding, records

FLAW_CASE = case_version("leak", expected_findings=[expected()])
CLEAN_CASE = case_version("clean", expected_findings=[])


def measure(result, name):
    return next(x for x in result.measures if x.measure == name)


def observations(result, name):
    return [o for o in result.observations if o.measure == name]


def score(cases, answers, **kwargs):
    return score_run(records(cases, answers, **kwargs), "run")


# --- GROUNDING -----------------------------------------------------------------------


def test_grounding_counts_expected_findings_times_repetitions_times_stages():
    # METHOD.md: 2 expected findings, 3 repetitions, 1 stage: 6 observations
    two = case_version("two", expected_findings=[expected("e1"), expected("e2", quote="Plomberna undersöktes.")])
    good = engine([finding("a"), finding("b", quote="Plomberna undersöktes.")])
    result = score([two], {("two", r): (good, None) for r in (1, 2, 3)}, repetitions=3)
    g = measure(result, "GROUNDING")
    assert (g.passed, g.observed, g.state) == (6, 6, m.PASS)


def test_first_miss_without_rerun_is_pending_never_passed():
    result = score([FLAW_CASE], {("leak", 1): (engine([]), None)})
    g = measure(result, "GROUNDING")
    assert (g.passed, g.observed, g.pending, g.state) == (0, 1, 1, m.PENDING_CONFIRMATION)
    assert result.outcome == m.PENDING_CONFIRMATION
    assert observations(result, "GROUNDING")[0].result == m.PENDING


def test_miss_confirmed_by_rerun_fails():
    result = score([FLAW_CASE], {("leak", 1): (engine([]), engine([finding(quote="Plomberna undersöktes.")]))})
    g = measure(result, "GROUNDING")
    assert (g.passed, g.failed, g.state) == (0, 1, m.BLOCK)
    assert observations(result, "GROUNDING")[0].result == m.FAILED
    assert result.outcome == m.BLOCK


def test_miss_dismissed_by_rerun_counts_as_passed_and_stays_visible():
    result = score([FLAW_CASE], {("leak", 1): (engine([]), engine([finding()]))})
    g = measure(result, "GROUNDING")
    assert (g.passed, g.observed, g.dismissed, g.state) == (1, 1, 1, m.PASS)
    (obs,) = observations(result, "GROUNDING")
    assert obs.result == m.DISMISSED and "dismissed by rerun" in obs.detail


def test_crashed_rerun_makes_the_run_crashed_without_numbers():
    result = score([FLAW_CASE], {("leak", 1): (engine([]), engine([], status="crashed"))})
    assert result.outcome == m.CRASHED_STATE
    assert result.measures == () and result.cases == () and result.observations == ()


def test_crashed_run_has_no_numbers():
    result = score([FLAW_CASE], {}, status="crashed")
    assert result.outcome == m.CRASHED_STATE and result.measures == ()


def test_rerun_serves_grounding_alone():
    # the first answer has a misquote; the rerun finds the expected finding. Only GROUNDING uses the rerun.
    first = engine([finding("x", rule="R-2", quote="Läckan är helt åtgärdad.", missing=False)])
    result = score([FLAW_CASE], {("leak", 1): (first, engine([finding()]))})
    assert measure(result, "GROUNDING").dismissed == 1
    q = measure(result, "QUOTE_FIDELITY")
    assert (q.passed, q.observed) == (0, 1)  # computed on the repetition's own answer, not the rerun's


def test_reviewer_stage_observes_only_reviewer_expected_findings():
    synthesis = expected("late", reviewer_expected=False, quote="Plomberna undersöktes.")
    cv = case_version("cv", expected_findings=[expected("early"), synthesis])
    rep = engine([finding("a")], report=[finding("r1", trace=("a",)), finding("r2", quote="Plomberna undersöktes.")])
    result = score([cv], {("cv", 1): (rep, None)}, merge=True)
    g = measure(result, "GROUNDING")
    assert (g.passed, g.observed) == (3, 3)  # reviewer: early only; report: early and late


def test_a_report_stage_miss_is_settled_by_the_rerun_report():
    # missed in the delivered report; the rerun's report finds it (its reviewers do not): dismissed, not confirmed
    synthesis = case_version("cv", expected_findings=[expected(reviewer_expected=False)])
    rerun = engine([], report=[finding("r")])
    result = score([synthesis], {("cv", 1): (engine([], report=[]), rerun)}, merge=True)
    g = measure(result, "GROUNDING")
    assert (g.observed, g.dismissed, g.failed, g.state) == (1, 1, 0, m.PASS)


# --- CLEAN_CASE_FLAWS -------------------------------------------------------------------


def test_clean_case_fails_on_any_flaw_and_ignores_strengths():
    strength = finding("s", kind="strength", missing=False, quote="Plomberna undersöktes.")
    ok = score([CLEAN_CASE], {("clean", 1): (engine([strength]), None)})
    assert (measure(ok, "CLEAN_CASE_FLAWS").passed, measure(ok, "CLEAN_CASE_FLAWS").observed) == (1, 1)
    bad = score([CLEAN_CASE], {("clean", 1): (engine([finding("f", quote="Provet togs ur kranen i pumphallen.")]), None)})
    c = measure(bad, "CLEAN_CASE_FLAWS")
    assert (c.passed, c.observed, c.state) == (0, 1, m.BLOCK)


def test_clean_case_fails_on_a_flaw_that_is_also_prohibited():
    # the lure of a clean case is itself a flaw: it fails PROHIBITED_OUTPUT and CLEAN_CASE_FLAWS alike
    lure = m.KeyFinding("lure", "flaw", ("R-1",), True, expected().passage, True)
    clean = case_version("clean", expected_findings=[], prohibited=[lure])
    result = score([clean], {("clean", 1): (engine([finding("f")]), None)})
    assert measure(result, "PROHIBITED_OUTPUT").state == m.BLOCK
    c = measure(result, "CLEAN_CASE_FLAWS")
    assert (c.passed, c.observed, c.state) == (0, 1, m.BLOCK)


def test_clean_case_flaws_not_observed_without_clean_cases():
    result = score([FLAW_CASE], {("leak", 1): (engine([finding()]), None)})
    c = measure(result, "CLEAN_CASE_FLAWS")
    assert (c.observed, c.state) == (0, m.NOT_OBSERVED)


# --- PROHIBITED_OUTPUT ------------------------------------------------------------------


def test_prohibited_finding_fails_even_when_the_expected_one_is_found():
    praise = m.KeyFinding("praise", "strength", ("R-1",), False, expected().passage, True)
    cv = case_version("cv", expected_findings=[expected()], prohibited=[praise])
    result = score([cv], {("cv", 1): (engine([finding("a"), finding("b", kind="strength", missing=False)]), None)})
    assert measure(result, "GROUNDING").state == m.PASS
    p = measure(result, "PROHIBITED_OUTPUT")
    assert (p.passed, p.observed, p.state) == (0, 1, m.BLOCK)
    assert "praise" in observations(result, "PROHIBITED_OUTPUT")[0].detail


# --- QUOTE_FIDELITY ---------------------------------------------------------------------


def test_every_quote_of_every_stage_is_observed():
    rep = engine([finding("a"), finding("b", quote="Läckan  är\nåtgärdad.")],
                 report=[finding("r", trace=("a",), quote="Läckan är åtgärdad, enligt anteckningen.")])
    result = score([FLAW_CASE], {("leak", 1): (rep, None)}, merge=True)
    q = measure(result, "QUOTE_FIDELITY")
    assert (q.passed, q.observed) == (2, 3)  # whitespace collapses; the rephrased report quote fails
    (obs,) = observations(result, "QUOTE_FIDELITY")
    assert (obs.stage, obs.subject, obs.reason) == ("report", "r", "quote.not-found")


def test_a_quote_differing_only_in_case_is_not_verbatim():
    result = score([FLAW_CASE], {("leak", 1): (engine([finding("a", quote="läckan är åtgärdad.")]), None)})
    q = measure(result, "QUOTE_FIDELITY")
    assert (q.passed, q.observed, q.state) == (0, 1, m.BLOCK)


@pytest.mark.parametrize("blank", ["", " ", " \n\t"])
def test_a_blank_quote_cannot_be_checked_and_fails(blank):
    result = score([FLAW_CASE], {("leak", 1): (engine([finding("a"), finding("b", quote=blank)]), None)})
    q = measure(result, "QUOTE_FIDELITY")
    assert (q.passed, q.observed, q.state) == (1, 2, m.BLOCK)
    (obs,) = observations(result, "QUOTE_FIDELITY")
    assert obs.subject == "b"


@pytest.mark.parametrize("other", ["\u00a0", "\f", "\u2003"])
def test_only_spaces_tabs_and_line_breaks_collapse_so_another_space_character_is_a_quote(other):
    """METHOD.md collapses spaces, tabs and line breaks and normalises nothing else: a no-break space, a form feed or an
    em space is a character like any other, so a quote of it alone stands in a document that holds it, and fails in one
    that does not, as quote.not-found rather than as an empty quote."""
    holding = case_version("holds", expected_findings=[expected()], document=f"Läckan är åtgärdad.\nAvgiften är 40{other}kr.")
    result = score([holding, FLAW_CASE], {("holds", 1): (engine([finding("a"), finding("b", quote=other)]), None),
                                           ("leak", 1): (engine([finding("a"), finding("b", quote=other)]), None)})
    q = measure(result, "QUOTE_FIDELITY")
    assert (q.passed, q.observed) == (3, 4)
    (obs,) = observations(result, "QUOTE_FIDELITY")
    assert (obs.case_version, obs.subject, obs.reason) == ("leak", "b", "quote.not-found")


# --- REDUCER_SURVIVAL -------------------------------------------------------------------


def survival(reviewer, report, key=None):
    cv = case_version("cv", expected_findings=[key or expected()])
    result = score([cv], {("cv", 1): (engine(reviewer, report=report), None)}, merge=True)
    return measure(result, "REDUCER_SURVIVAL"), observations(result, "REDUCER_SURVIVAL")


def test_survival_passes_when_kept_and_traced_to_the_reviewer():
    r, _ = survival([finding("a")], [finding("r", quote="Läckan är åtgärdad. Åtgärden utfördes", trace=("a",))])
    assert (r.passed, r.observed, r.state) == (1, 1, m.PASS)  # quote width may change


def test_survival_fails_when_lost_in_the_merge():
    r, obs = survival([finding("a")], [])
    assert (r.passed, r.observed) == (0, 1) and obs[0].reason == "lost"


def test_survival_fails_when_a_flaw_is_traced_to_another_finding():
    other = finding("b", rule="R-2", missing=False, quote="Plomberna undersöktes.")
    r, obs = survival([finding("a"), other], [finding("r", trace=("b",))])
    assert obs[0].reason == "trace"


def test_survival_fails_when_the_kind_changes():
    r, obs = survival([finding("a")], [finding("r", kind="strength", trace=("a",))])
    assert obs[0].reason == "changed.kind"


def test_survival_fails_naming_the_missing_flag_when_it_changes():
    r, obs = survival([finding("a")], [finding("r", missing=False, trace=("a",))])
    assert (r.passed, r.observed) == (0, 1) and obs[0].reason == "changed.missing"


def test_survival_fails_when_the_primary_rule_changes_to_another_accepted_one():
    # the report still matches the expected finding (the key accepts both rules), but under another primary rule
    key = expected(rules=("R-1", "R-2"))
    r, obs = survival([finding("a", rule="R-1")], [finding("r", rule="R-2", trace=("a",))], key=key)
    assert (r.passed, r.observed, r.state) == (0, 1, m.BLOCK)
    assert obs[0].reason == "changed.rule"


def test_survival_fails_when_it_appears_only_after_the_merge():
    r, obs = survival([], [finding("r")])
    assert (r.observed, obs[0].reason) == (1, "added")


def test_strength_needs_no_trace():
    key = expected(kind="strength", missing=False)
    s = finding("a", kind="strength", missing=False)
    r, _ = survival([s], [finding("r", kind="strength", missing=False)], key=key)
    assert r.state == m.PASS


def test_survival_not_observed_without_the_merge():
    result = score([FLAW_CASE], {("leak", 1): (engine([finding()]), None)})
    assert measure(result, "REDUCER_SURVIVAL").state == m.NOT_OBSERVED


def test_survival_not_observed_when_nobody_reported_it():
    r, _ = survival([], [])
    assert r.observed == 0


def test_survival_does_not_observe_a_finding_only_the_merge_is_expected_to_produce():
    # the key does not expect a reviewer to report it, so appearing only after the merge is no failure: not observed
    r, obs = survival([], [finding("r")], key=expected(reviewer_expected=False))
    assert (r.observed, r.state, obs) == (0, m.NOT_OBSERVED, [])


# --- INVARIANT_PAIRS --------------------------------------------------------------------


def pair_records(answer_a, answer_b, *, kind="invariance", rules_differ=False):
    a = case_version("lic-f", expected_findings=[expected()], case="lic")
    b = case_version("lic-m", expected_findings=[expected()], case="lic")
    pair = m.Pair("lic", kind, ("lic-f", "lic-m"), "pronoun", rules_differ)
    return score([a, b], {("lic-f", 1): (answer_a, None), ("lic-m", 1): (answer_b, None)}, pairs=[pair])


def test_invariance_pair_passes_when_both_read_alike():
    result = pair_records(engine([finding("a")]), engine([finding("z")]))
    p = measure(result, "INVARIANT_PAIRS")
    assert (p.passed, p.observed) == (1, 1)


def test_invariance_pair_fails_when_one_version_misses_the_finding():
    result = pair_records(engine([]), engine([finding("z")]))
    p = measure(result, "INVARIANT_PAIRS")
    assert (p.passed, p.observed, p.state) == (0, 1, m.BLOCK)
    assert observations(result, "INVARIANT_PAIRS")[0].subject == "lic"


def test_invariance_pair_fails_on_a_different_number_of_unexpected_findings():
    extra = finding("u", rule="R-2", missing=False, quote="Provet togs ur kranen i pumphallen.")
    result = pair_records(engine([finding("a"), extra]), engine([finding("z")]))
    assert observations(result, "INVARIANT_PAIRS")[0].reason == "count.unexpected"


def test_invariance_pair_fails_when_the_primary_rule_differs():
    # both versions match the expected finding, but under different accepted rules: they do not read alike
    a = case_version("lic-f", expected_findings=[expected(rules=("R-1", "R-2"))], case="lic")
    b = case_version("lic-m", expected_findings=[expected(rules=("R-1", "R-2"))], case="lic")
    pair = m.Pair("lic", "invariance", ("lic-f", "lic-m"), "pronoun", False)
    answers = {("lic-f", 1): (engine([finding("a", rule="R-1")]), None), ("lic-m", 1): (engine([finding("z", rule="R-2")]), None)}
    result = score([a, b], answers, pairs=[pair])
    p = measure(result, "INVARIANT_PAIRS")
    assert (p.passed, p.observed, p.state) == (0, 1, m.BLOCK)
    assert observations(result, "INVARIANT_PAIRS")[0].reason == "expected"


def test_contrast_pairs_and_pairs_with_different_rules_are_never_compared():
    for kwargs in ({"kind": "contrast"}, {"rules_differ": True}):
        result = pair_records(engine([]), engine([finding("z")]), **kwargs)
        assert measure(result, "INVARIANT_PAIRS").state == m.NOT_OBSERVED


def test_invariance_pair_compares_the_versions_within_each_repetition():
    # repetition 1: both found; repetition 2: only the first version found it. Each repetition is one observation.
    a = case_version("lic-f", expected_findings=[expected()], case="lic")
    b = case_version("lic-m", expected_findings=[expected()], case="lic")
    pair = m.Pair("lic", "invariance", ("lic-f", "lic-m"), "pronoun", False)
    answers = {("lic-f", 1): (engine([finding("a")]), None), ("lic-m", 1): (engine([finding("z")]), None),
               ("lic-f", 2): (engine([finding("a")]), None), ("lic-m", 2): (engine([]), None)}
    result = score([a, b], answers, pairs=[pair], repetitions=2)
    p = measure(result, "INVARIANT_PAIRS")
    assert (p.passed, p.observed) == (1, 2)
    assert [o.repetition for o in observations(result, "INVARIANT_PAIRS")] == ["2"]


# --- IDENTICAL_INPUT_STABILITY ----------------------------------------------------------


def test_stability_compares_all_unordered_pairs_of_repetitions():
    answers = {("leak", r): (engine([finding()]), None) for r in (1, 2, 3)}
    s = measure(score([FLAW_CASE], answers, repetitions=3), "IDENTICAL_INPUT_STABILITY")
    assert (s.passed, s.observed) == (3, 3)
    one = measure(score([FLAW_CASE], {("leak", 1): (engine([finding()]), None)}), "IDENTICAL_INPUT_STABILITY")
    assert one.state == m.NOT_OBSERVED  # one repetition gives no pair


def test_stability_fails_when_an_outcome_differs():
    answers = {("leak", 1): (engine([finding()]), None), ("leak", 2): (engine([]), engine([finding()]))}
    result = score([FLAW_CASE], answers, repetitions=2)
    (obs,) = observations(result, "IDENTICAL_INPUT_STABILITY")
    assert (obs.repetition, obs.reason) == ("1-2", "outcome") and "e1" in obs.detail


def test_stability_compares_each_stage_on_its_own():
    # the reviewers agree in both repetitions; only the delivered report differs, so only the report stage fails
    answers = {("leak", 1): (engine([finding("a")], report=[finding("r", trace=("a",))]), None),
               ("leak", 2): (engine([finding("a")], report=[]), None)}
    result = score([FLAW_CASE], answers, repetitions=2, merge=True)
    s = measure(result, "IDENTICAL_INPUT_STABILITY")
    assert (s.passed, s.observed) == (1, 2)
    (obs,) = observations(result, "IDENTICAL_INPUT_STABILITY")
    assert (obs.stage, obs.reason) == (m.REPORT, "outcome")


def test_stability_compares_counts_not_identities():
    u1 = finding("u1", rule="R-2", missing=False, quote="Provet togs ur kranen i pumphallen.")
    u2 = finding("u2", rule="R-2", missing=False, quote="Plomberna undersöktes.")
    answers = {("leak", 1): (engine([finding(), u1]), None), ("leak", 2): (engine([finding(), u2]), None)}
    assert measure(score([FLAW_CASE], answers, repetitions=2), "IDENTICAL_INPUT_STABILITY").state == m.PASS


def test_stability_leaves_voluntary_strengths_out():
    cv = case_version("v", expected_findings=[expected()], voluntary=[m.VoluntaryStrength("R-2", None)])
    extra = finding("s", kind="strength", rule="R-2", missing=False, quote="Plomberna undersöktes.")
    answers = {("v", 1): (engine([finding(), extra]), None), ("v", 2): (engine([finding()]), None)}
    assert measure(score([cv], answers, repetitions=2), "IDENTICAL_INPUT_STABILITY").state == m.PASS


PRAISE = m.KeyFinding("praise", "strength", ("R-2",), False, expected(quote="Plomberna undersöktes.").passage, True)
PRAISED = finding("p", kind="strength", rule="R-2", missing=False, quote="Plomberna undersöktes.")
UNEXPECTED_FLAW = finding("u", rule="R-2", missing=False, quote="Provet togs ur kranen i pumphallen.")
STRENGTH_KEY = expected("s1", kind="strength", rules=("R-2",), missing=False, quote="Objekt: Pumpstation Norra, Kalmar kommun.")
KEPT = finding("s", kind="strength", rule="R-2", missing=False, quote="Objekt: Pumpstation Norra, Kalmar kommun.")
KEPT_AGAIN = finding("s-dup", kind="strength", rule="R-2", missing=False, quote="Objekt: Pumpstation Norra, Kalmar kommun.")


@pytest.mark.parametrize("count,first,second", [
    # each row: the two repetitions have the same outcomes, and only the named count differs
    ("flaws", [finding("a"), finding("dup")], [finding("a")]),  # a duplicate flaw
    ("strengths", [finding("a"), KEPT, KEPT_AGAIN], [finding("a"), KEPT]),  # a duplicate strength
    ("unexpected", [finding("a"), UNEXPECTED_FLAW], [finding("a"), finding("dup")]),
    ("prohibited", [finding("a"), KEPT, PRAISED], [finding("a"), KEPT, KEPT_AGAIN]),
])
def test_stability_fails_when_one_count_differs(count, first, second):
    cv = case_version("cv", expected_findings=[expected(), STRENGTH_KEY], prohibited=[PRAISE])
    answers = {("cv", 1): (engine(first), None), ("cv", 2): (engine(second), None)}
    result = score([cv], answers, repetitions=2)
    (obs,) = observations(result, "IDENTICAL_INPUT_STABILITY")
    assert obs.reason == f"count.{count}"


# --- states and outcome -----------------------------------------------------------------


def test_outcome_pass_says_nothing_about_unobserved_measures():
    result = score([FLAW_CASE], {("leak", 1): (engine([finding()]), None)})
    states = {x.measure: x.state for x in result.measures}
    assert result.outcome == m.PASS
    assert states["REDUCER_SURVIVAL"] == m.NOT_OBSERVED and states["GROUNDING"] == m.PASS


def test_outcome_is_not_observed_when_every_measure_is():
    result = score([], {})  # a suite with nothing in it: no measure has anything to count
    assert {x.state for x in result.measures} == {m.NOT_OBSERVED}
    assert result.outcome == m.NOT_OBSERVED


def test_block_wins_over_pending():
    cv = case_version("two", expected_findings=[expected()])
    answers = {("two", 1): (engine([finding(quote="Läckan är åtgärdad!")]), None)}
    result = score([cv], answers)
    assert measure(result, "GROUNDING").state == m.PENDING_CONFIRMATION
    assert measure(result, "QUOTE_FIDELITY").state == m.BLOCK
    assert result.outcome == m.BLOCK


def test_no_percentages_only_counts():
    result = score([FLAW_CASE], {("leak", 1): (engine([finding()]), None)})
    for x in result.measures:
        assert isinstance(x.passed, int) and isinstance(x.observed, int)
        assert x.passed <= x.observed


# --- how scoring runs ---------------------------------------------------------------


def test_scoring_leaves_the_cycle_collector_as_it_found_it():
    import gc

    answers = {("leak", 1): (engine([finding()]), None)}
    assert gc.isenabled()
    score([FLAW_CASE], answers)
    assert gc.isenabled()
    gc.disable()
    try:
        score([FLAW_CASE], answers)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_a_repeated_answer_is_scored_as_if_it_were_judged_anew():
    # equal findings in later repetitions reuse the first verdict: the counts must be those of three separate judgements
    miss = engine([finding("a", rule="R-2")])
    hit = engine([finding("a")])
    result = score([FLAW_CASE], {("leak", 1): (hit, None), ("leak", 2): (miss, None), ("leak", 3): (hit, None)}, repetitions=3)
    g = measure(result, "GROUNDING")
    assert (g.passed, g.observed, g.pending) == (2, 3, 1)
    stability = measure(result, "IDENTICAL_INPUT_STABILITY")
    assert (stability.passed, stability.observed) == (1, 3)


def test_the_verdict_source_gives_fresh_verdicts_and_judges_a_repeated_answer_once():
    """The pages ask for every answer's verdicts; an engine repeating itself (one object from the spool) is judged once."""
    from pathlib import Path

    from sitegen.score.matching import CaseContext, judge_stage, method_for
    from sitegen.load.records import load_records
    from sitegen.score.scoring import verdict_source

    bundled = load_records(Path(__file__).resolve().parent.parent / "records")
    verdicts = verdict_source(bundled)
    runs = {r.id: r for r in bundled.runs}
    asked = 0
    for (run_id, cv_id, _), answer in bundled.answers.items():
        if answer.answer.status != m.COMPLETED:
            continue
        for stage in bundled.stages(runs[run_id]):
            fresh = judge_stage(CaseContext(bundled.case_versions[cv_id]), answer.answer.stage_findings(stage),
                                method_for(runs[run_id].scorer_version))
            assert verdicts(answer, stage) == fresh
            asked += 1
    assert asked > 50
    first = next(a for a in bundled.answers.values() if a.answer.status == m.COMPLETED)
    again = first._replace(repetition=first.repetition + 9)
    assert again.answer is first.answer
    stage = bundled.stages(runs[first.run])[0]
    kept = verdicts(first, stage)
    assert verdicts(again, stage) is kept
    other = next(a for a in bundled.answers.values() if a.case_version != first.case_version and a.answer.status == m.COMPLETED)
    verdicts(other, bundled.stages(runs[other.run])[0])
    judged_again = verdicts(first, stage)
    assert judged_again == kept and judged_again is not kept, "only the case version at hand is kept"
