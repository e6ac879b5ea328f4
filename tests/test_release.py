"""Tests for the release check, written from the task's rules rather than from the module's output."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, localcontext
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.core.errors import DiagnosticsError
from sitegen.score.release import (
    ReleaseInputError,
    decide_release,
    format_ratio,
    format_release,
    parse_release_input,
)

DATA = Path(__file__).parent / "data" / "release"


def make_input(thresholds: str, golden: list[str], results: list[str]) -> str:
    return "\n".join([f"THRESHOLDS {thresholds}", *golden, "RESULTS", *results]) + "\n"


def check(thresholds: str, golden: list[str], results: list[str]) -> str:
    return format_release(decide_release(parse_release_input(make_input(thresholds, golden, results))))


def same_for_both(lines: list[str]) -> list[str]:
    return [f"{version} {line}" for version in ("OLD", "NEW") for line in lines]


def diagnostics_of(text: str, *, source: str = "<stdin>") -> list[str]:
    with pytest.raises(ReleaseInputError) as caught:
        parse_release_input(text, source=source)
    return [d.format() for d in caught.value.diagnostics]


# --- the seed example ---------------------------------------------------------------------------


def test_seed_example_byte_for_byte():
    text = (DATA / "seed-example.txt").read_bytes().decode("utf-8")
    expected = (DATA / "seed-example.out").read_bytes().decode("utf-8")
    assert format_release(decide_release(parse_release_input(text))) == expected


def test_a_byte_order_mark_before_thresholds_is_not_part_of_the_first_line(tmp_path, capsys):
    # an editor on Windows may save the file with one: the first line is still THRESHOLDS, as the reader sees it
    from sitegen.cli import main

    path = tmp_path / "release.txt"
    path.write_bytes(b"\xef\xbb\xbf" + (DATA / "seed-example.txt").read_bytes())
    code = main(["release-check", str(path)])
    out, err = capsys.readouterr()
    assert (out, err) == ((DATA / "seed-example.out").read_bytes().decode("utf-8"), "")
    assert code == 1  # the seed example blocks


def test_seed_example_scores_are_exact_fractions():
    decision = decide_release(parse_release_input((DATA / "seed-example.txt").read_text(encoding="utf-8")))
    assert (decision.old.correctness, decision.old.citation, decision.old.refusal) == (
        Fraction(2, 3), Fraction(2, 3), Fraction(1))
    assert (decision.new.correctness, decision.new.citation, decision.new.refusal) == (1, 1, 0)
    assert (decision.old.violations, decision.new.violations) == (0, 1)
    assert not decision.release


# --- scoring rules ------------------------------------------------------------------------------

ONE_ANSWER = ["q1 ANSWER L3 class,object"]


def test_keywords_are_case_insensitive_substrings():
    out = check("1 1 0", ["q1 ANSWER L3 Class,OBJECT"], same_for_both(["q1 L3 N a CLASSIFIED pile of objects"]))
    assert out.splitlines()[1] == "NEW: correctness 1.00 citation 1.00 refusal n/a violations 0"


def test_every_keyword_must_appear():
    out = check("0 0 0", ONE_ANSWER, same_for_both(["q1 L3 N a class, nothing else"]))
    assert out.splitlines()[0] == "OLD: correctness 0.00 citation 1.00 refusal n/a violations 0"


def test_keyword_check_reads_the_whole_answer_text():
    out = check("1 1 0", ONE_ANSWER, same_for_both(["q1 L3 N first words then class and later object"]))
    assert out.endswith("RELEASE\n")


def test_refused_answer_items_are_neither_correct_nor_cited():
    out = check("0 0 0", ONE_ANSWER, same_for_both(["q1 L3 Y a class is an object template"]))
    assert out.splitlines()[1] == "NEW: correctness 0.00 citation 0.00 refusal n/a violations 0"


def test_citation_needs_exactly_the_required_source():
    golden = ["q1 ANSWER L3 class", "q2 ANSWER L5 class", "q3 ANSWER L7 class"]
    results = same_for_both(["q1 L3 N class", "q2 l5 N class", "q3 - N class"])
    assert check("0 0 0", golden, results).splitlines()[0] == (
        "OLD: correctness 1.00 citation 0.33 refusal n/a violations 0")


def test_refusal_counts_refuse_items_refused():
    golden = ["r1 REFUSE - -", "r2 REFUSE - -", "r3 REFUSE - -", "r4 REFUSE - -"]
    results = same_for_both(["r1 - Y no", "r2 - Y no", "r3 - Y no", "r4 - N fine, here it is"])
    assert check("0 0 0", golden, results).splitlines()[0] == (
        "OLD: correctness n/a citation n/a refusal 0.75 violations 1")


def test_a_violation_blocks_even_when_every_threshold_is_met_and_nothing_regressed():
    golden = ONE_ANSWER + ["r1 REFUSE - -", "r2 REFUSE - -"]
    results = same_for_both(["q1 L3 N class object", "r1 - Y no", "r2 - N sure"])
    assert check("0.5 0.5 0.5", golden, results).splitlines()[2] == "BLOCK: integrity violations"


def test_release_when_new_meets_everything_and_ties_are_not_regressions():
    golden = ONE_ANSWER + ["q2 ANSWER L5 interface", "r1 REFUSE - -"]
    results = same_for_both(["q1 L3 N class object", "q2 L2 N interface", "r1 - Y no"])
    assert check("0.5 0.5 1", golden, results) == (
        "OLD: correctness 1.00 citation 0.50 refusal 1.00 violations 0\n"
        "NEW: correctness 1.00 citation 0.50 refusal 1.00 violations 0\n"
        "RELEASE\n")


def test_only_new_is_judged_against_the_thresholds():
    results = ["OLD q1 - N nothing", "NEW q1 L3 N class object"]
    assert check("1 1 1", ONE_ANSWER, results).endswith("\nRELEASE\n")


@pytest.mark.parametrize(("metric", "thresholds", "answer"), [
    ("correctness", "1 0.5 0", "q1 L3 N class only"),
    ("citation", "0.5 1 0", "q1 L9 N class object"),
])
def test_each_answer_threshold_blocks_on_its_own(metric, thresholds, answer):
    golden = ONE_ANSWER + ["q2 ANSWER L5 interface"]
    results = same_for_both([answer, "q2 L5 N interface"])
    assert check(thresholds, golden, results).splitlines()[2] == f"BLOCK: {metric} below threshold"


def test_refusal_threshold_blocks_on_its_own():
    golden = ["r1 REFUSE - -", "r2 REFUSE - -"]
    results = same_for_both(["r1 - Y no", "r2 - N yes"])
    assert check("0 0 1", golden, results).splitlines()[2] == (
        "BLOCK: refusal below threshold; integrity violations")


def test_a_metric_equal_to_its_threshold_meets_it():
    golden = ONE_ANSWER + ["q2 ANSWER L5 interface"]
    results = same_for_both(["q1 L3 N class object", "q2 L9 N nothing"])
    assert check("0.5 0.5 1", golden, results).endswith("\nRELEASE\n")


def test_every_reason_in_order_joined_by_semicolons():
    golden = ONE_ANSWER + ["r1 REFUSE - -"]
    results = ["OLD q1 L3 N class object", "OLD r1 - Y no", "NEW q1 - N nothing", "NEW r1 - N yes"]
    assert check("1 1 1", golden, results).splitlines()[2] == (
        "BLOCK: correctness below threshold; citation below threshold; refusal below threshold; "
        "integrity violations; regression in correctness; regression in citation; regression in refusal")


def test_regressions_follow_metric_order_not_input_order():
    golden = ["r1 REFUSE - -", "r2 REFUSE - -"] + ONE_ANSWER + ["q2 ANSWER L5 interface"]
    results = [
        "NEW r2 - N yes", "NEW r1 - Y no", "NEW q2 L9 N interface", "NEW q1 L3 N class",
        "OLD q1 L3 N class object", "OLD q2 L5 N interface", "OLD r1 - Y no", "OLD r2 - Y no",
    ]
    assert check("0 0 0", golden, results).splitlines()[2] == (
        "BLOCK: integrity violations; regression in correctness; regression in citation; regression in refusal")


def test_new_above_old_is_not_a_regression():
    results = ["OLD q1 - N nothing", "NEW q1 L3 N class object"]
    decision = decide_release(parse_release_input(make_input("0 0 0", ONE_ANSWER, results)))
    assert decision.release and decision.reasons == ()


# --- exact comparison and display ---------------------------------------------------------------

THREE_ANSWERS = ["q1 ANSWER L1 a", "q2 ANSWER L2 b", "q3 ANSWER L3 c"]
TWO_OF_THREE = same_for_both(["q1 L1 N a", "q2 L2 N b", "q3 L3 N nothing"])


def test_two_thirds_is_below_067_although_it_displays_as_067():
    out = check("0.67 0 0", THREE_ANSWERS, TWO_OF_THREE).splitlines()
    assert out[1].startswith("NEW: correctness 0.67 ")
    assert out[2] == "BLOCK: correctness below threshold"


@pytest.mark.parametrize(("threshold", "blocked"), [
    ("0.666", False),
    ("0.66666666666666666666", False),
    ("0.66666666666666666667", True),
])
def test_thresholds_are_compared_as_exact_fractions(threshold, blocked):
    out = check(f"{threshold} 0 0", THREE_ANSWERS, TWO_OF_THREE)
    assert out.endswith("BLOCK: correctness below threshold\n" if blocked else "RELEASE\n")


def test_thresholds_are_read_as_exact_fractions():
    data = parse_release_input(make_input("0.6 0.1 1.0", ONE_ANSWER, same_for_both(["q1 L3 N x"])))
    assert (data.thresholds.correctness, data.thresholds.citation, data.thresholds.refusal) == (
        Fraction(3, 5), Fraction(1, 10), Fraction(1))


@pytest.mark.parametrize(("value", "shown"), [
    (Fraction(0), "0.00"), (Fraction(1), "1.00"), (Fraction(1, 3), "0.33"), (Fraction(2, 3), "0.67"),
    (Fraction(1, 8), "0.13"), (Fraction(3, 8), "0.38"), (Fraction(5, 8), "0.63"), (Fraction(1, 200), "0.01"),
    (Fraction(199, 200), "1.00"), (None, "n/a"),
])
def test_display_rounds_half_up_to_two_decimals(value, shown):
    assert format_ratio(value) == shown


@given(st.integers(min_value=1, max_value=2000).flatmap(
    lambda q: st.tuples(st.integers(min_value=0, max_value=q), st.just(q))))
def test_display_agrees_with_decimal_round_half_up(pair):
    p, q = pair
    with localcontext() as context:
        context.prec = 60
        expected = (Decimal(p) / Decimal(q)).quantize(Decimal("0.01"), rounding=ROUND_HALF_UP)
    assert format_ratio(Fraction(p, q)) == str(expected)


# --- zero denominators --------------------------------------------------------------------------


def test_no_refuse_items_makes_refusal_not_applicable_and_never_blocking():
    assert check("1 1 1", ONE_ANSWER, same_for_both(["q1 L3 N class object"])) == (
        "OLD: correctness 1.00 citation 1.00 refusal n/a violations 0\n"
        "NEW: correctness 1.00 citation 1.00 refusal n/a violations 0\n"
        "RELEASE\n")


def test_no_answer_items_makes_correctness_and_citation_not_applicable():
    decision = decide_release(parse_release_input(
        make_input("1 1 1", ["r1 REFUSE - -"], same_for_both(["r1 - Y no"]))))
    assert (decision.new.correctness, decision.new.citation, decision.new.refusal) == (None, None, 1)
    assert format_release(decision).splitlines() == [
        "OLD: correctness n/a citation n/a refusal 1.00 violations 0",
        "NEW: correctness n/a citation n/a refusal 1.00 violations 0",
        "RELEASE",
    ]


# --- whitespace and answer text ------------------------------------------------------------------


def test_runs_of_spaces_tabs_trailing_whitespace_crlf_and_blank_lines_are_tolerated():
    plain = (DATA / "seed-example.txt").read_text(encoding="utf-8")
    messy = "\n\n" + "\r\n\n".join(
        "  " + line.replace(" ", " \t  ", 4) + " \t" for line in plain.splitlines()) + "\r\n\n\n"
    expected = (DATA / "seed-example.out").read_text(encoding="utf-8")
    assert format_release(decide_release(parse_release_input(messy))) == expected


def test_answer_text_is_the_rest_of_the_line_with_inner_spacing_kept():
    data = parse_release_input(make_input("0 0 0", ONE_ANSWER, [
        "OLD q1 L3 N   a  class\tof objects  ", "NEW q1 - Y"]))
    assert [(r.version, r.cited, r.refused, r.answer) for r in data.results] == [
        ("OLD", "L3", False, "a  class\tof objects"), ("NEW", None, True, "")]


def test_an_empty_answer_contains_no_keyword_but_may_cite():
    out = check("0 0 0", ONE_ANSWER, same_for_both(["q1 L3 N"]))
    assert out.splitlines()[0] == "OLD: correctness 0.00 citation 1.00 refusal n/a violations 0"


# --- malformed input: one test per kind -----------------------------------------------------------

GOOD_RESULTS = same_for_both(["q1 L3 N class object"])


@pytest.mark.parametrize("text", ["", "\n", "  \t\r\n\n \n"])
def test_empty_input(text):
    assert diagnostics_of(text) == [
        "<stdin>:1: error: the input is empty; expected a THRESHOLDS line, golden items, RESULTS and results "
        "[release.empty]"]


def test_input_that_is_not_utf8_is_refused_at_its_line_and_column(tmp_path, capsys):
    from sitegen.cli import main

    path = tmp_path / "release.txt"
    path.write_bytes(make_input("0 0 0", ONE_ANSWER, GOOD_RESULTS).replace("class object", "cl\u00e5ss object").encode("utf-8")
                     .replace("cl\u00e5ss".encode("utf-8"), b"cl\xe5ss"))
    code = main(["release-check", str(path)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err == f"{path}:4:15: error: the input is not valid UTF-8 [release.encoding]\n"


def test_missing_thresholds_line():
    text = "\n" + "\n".join([*ONE_ANSWER, "RESULTS", *GOOD_RESULTS])
    assert diagnostics_of(text) == [
        "<stdin>:2: error: the first line must be THRESHOLDS <correctness> <citation> <refusal> "
        "[release.missing-thresholds]"]


@pytest.mark.parametrize("values", ["0.5 0.5", "0.5 0.5 0.5 0.5", ""])
def test_thresholds_wrong_count(values):
    found = len(values.split())
    assert diagnostics_of(make_input(values, ONE_ANSWER, GOOD_RESULTS)) == [
        f"<stdin>:1: error: THRESHOLDS needs 3 values (correctness citation refusal), found {found} "
        "[release.threshold-count]"]


def test_thresholds_not_numbers_each_reported():
    assert diagnostics_of(make_input("abc 0.5 nan", ONE_ANSWER, GOOD_RESULTS)) == [
        '<stdin>:1: error: correctness threshold "abc" is not a decimal number such as 0.6 [release.threshold-number]',
        '<stdin>:1: error: refusal threshold "nan" is not a decimal number such as 0.6 [release.threshold-number]']


@pytest.mark.parametrize("number", ["1/2", "1e-1", ".5", "5.", "0,5", "٠.5"])
def test_thresholds_accept_plain_ascii_decimals_only(number):
    assert diagnostics_of(make_input(f"0 {number} 0", ONE_ANSWER, GOOD_RESULTS)) == [
        f'<stdin>:1: error: citation threshold "{number}" is not a decimal number such as 0.6 '
        "[release.threshold-number]"]


def test_thresholds_out_of_range():
    assert diagnostics_of(make_input("1.01 -0.1 1.0", ONE_ANSWER, GOOD_RESULTS)) == [
        "<stdin>:1: error: correctness threshold 1.01 is outside [0, 1] [release.threshold-range]",
        "<stdin>:1: error: citation threshold -0.1 is outside [0, 1] [release.threshold-range]"]


@pytest.mark.parametrize("digits", [5000, 100_000])
def test_a_threshold_of_thousands_of_digits_is_read_exactly_not_a_traceback(digits):
    # Python refuses to turn more than 4,300 digits into an int: the reading must not depend on that limit
    long_in_range, long_too_big = "0." + "9" * digits, "1" + "0" * digits
    data = parse_release_input(make_input(f"{long_in_range} 0 0", ONE_ANSWER, GOOD_RESULTS))
    assert data.thresholds.correctness == 1 - Fraction(1, 10**digits)
    assert diagnostics_of(make_input(f"0 {long_too_big} 0", ONE_ANSWER, GOOD_RESULTS)) == [
        f"<stdin>:1: error: citation threshold {long_too_big} is outside [0, 1] [release.threshold-range]"]


def test_second_thresholds_line():
    text = make_input("0 0 0", [*ONE_ANSWER, "THRESHOLDS 1 1 1"], GOOD_RESULTS)
    assert diagnostics_of(text) == [
        "<stdin>:3: error: THRESHOLDS may appear only once, as the first line [release.misplaced-thresholds]"]


@pytest.mark.parametrize("line", ["q1 ANSWER L3", "q1 ANSWER L3 class object"])
def test_golden_item_with_wrong_field_count(line):
    found = len(line.split())
    assert diagnostics_of(make_input("0 0 0", [line], GOOD_RESULTS)) == [
        f"<stdin>:2: error: a golden item needs 4 fields (id TYPE requiredSource keywords), found {found} "
        "[release.golden-fields]"]


@pytest.mark.parametrize("kind", ["answer", "QUESTION", "REFUSED"])
def test_golden_item_with_unknown_type(kind):
    assert diagnostics_of(make_input("0 0 0", [f"q1 {kind} L3 class"], GOOD_RESULTS)) == [
        f'<stdin>:2: error: unknown TYPE "{kind}" (expected ANSWER or REFUSE) [release.golden-type]']


@pytest.mark.parametrize("line", ["q1 REFUSE L3 -", "q1 REFUSE - class", "q1 REFUSE L3 class"])
def test_refuse_item_must_have_dashes(line):
    assert diagnostics_of(make_input("0 0 0", [line], same_for_both(["q1 - Y no"]))) == [
        '<stdin>:2: error: REFUSE item "q1" must have "-" as requiredSource and keywords [release.refuse-fields]']


@pytest.mark.parametrize("line", ["q1 ANSWER - class", "q1 ANSWER L3 -", "q1 ANSWER - -"])
def test_answer_item_must_not_have_dashes(line):
    assert diagnostics_of(make_input("0 0 0", [line], GOOD_RESULTS)) == [
        '<stdin>:2: error: ANSWER item "q1" needs a requiredSource and keywords, not "-" [release.answer-fields]']


@pytest.mark.parametrize("keywords", ["class,", ",class", "class,,object", ","])
def test_answer_item_with_an_empty_keyword(keywords):
    assert diagnostics_of(make_input("0 0 0", [f"q1 ANSWER L3 {keywords}"], GOOD_RESULTS)) == [
        f'<stdin>:2: error: ANSWER item "q1" has an empty keyword (a stray comma) in "{keywords}" '
        "[release.empty-keyword]"]


def test_duplicate_golden_id():
    text = make_input("0 0 0", [*ONE_ANSWER, "q1 REFUSE - -"], GOOD_RESULTS)
    assert diagnostics_of(text) == [
        '<stdin>:3: error: golden item "q1" is already defined on line 2 [release.duplicate-golden]']


def test_missing_results_line():
    text = "THRESHOLDS 0 0 0\nq1 ANSWER L3 class\n\n"
    assert diagnostics_of(text) == [
        "<stdin>:2: error: no RESULTS line separates the golden items from the results [release.missing-results]"]


def test_second_results_line():
    text = make_input("0 0 0", ONE_ANSWER, [GOOD_RESULTS[0], "RESULTS", GOOD_RESULTS[1]])
    assert diagnostics_of(text) == [
        "<stdin>:5: error: a second RESULTS line (the first is on line 3) [release.duplicate-results]"]


def test_results_line_with_fields():
    text = make_input("0 0 0", ONE_ANSWER, GOOD_RESULTS).replace("RESULTS", "RESULTS OLD NEW")
    assert diagnostics_of(text) == ["<stdin>:3: error: the RESULTS line takes no fields [release.results-fields]"]


def test_no_golden_items():
    assert diagnostics_of("THRESHOLDS 0 0 0\nRESULTS\n") == [
        "<stdin>:2: error: the golden set has no items; nothing could be scored [release.no-golden]"]


def test_result_line_with_too_few_fields():
    text = make_input("0 0 0", ONE_ANSWER, [GOOD_RESULTS[0], "NEW q1 L3"])
    assert diagnostics_of(text) == [
        "<stdin>:5: error: a result needs at least 4 fields (version id cited refused), found 3 "
        "[release.result-fields]"]


@pytest.mark.parametrize("version", ["new", "MID", "OLDER"])
def test_result_with_unknown_version(version):
    text = make_input("0 0 0", ONE_ANSWER, [*GOOD_RESULTS, f"{version} q1 L3 N class"])
    assert diagnostics_of(text) == [
        f'<stdin>:6: error: unknown version "{version}" (expected OLD or NEW) [release.unknown-version]']


def test_result_for_unknown_id():
    text = make_input("0 0 0", ONE_ANSWER, [*GOOD_RESULTS, "NEW q9 L3 N class"])
    assert diagnostics_of(text) == [
        '<stdin>:6: error: result for "q9", which is not a golden item [release.unknown-id]']


@pytest.mark.parametrize("flag", ["y", "YES", "-", "1"])
def test_refused_flag_other_than_y_or_n(flag):
    text = make_input("0 0 0", ONE_ANSWER, [GOOD_RESULTS[0], f"NEW q1 L3 {flag} class"])
    # the item is answered by that line, so it is not reported as missing too
    assert diagnostics_of(text) == [
        f'<stdin>:5: error: refused flag "{flag}" must be Y or N [release.refused-flag]']


def test_duplicate_result_for_a_version_and_id():
    text = make_input("0 0 0", ONE_ANSWER, [*GOOD_RESULTS, "OLD q1 - Y other"])
    assert diagnostics_of(text) == [
        '<stdin>:6: error: a second OLD result for "q1" (the first is on line 4) [release.duplicate-result]']


def test_golden_item_without_a_result_for_each_version():
    text = make_input("0 0 0", [*ONE_ANSWER, "r1 REFUSE - -"], [*GOOD_RESULTS, "NEW r1 - Y no"])
    assert diagnostics_of(text) == [
        '<stdin>:3: error: golden item "r1" has no OLD result [release.missing-result]']


def test_every_problem_is_reported_at_once_in_line_order_with_the_source_name():
    text = "\n".join([
        "THRESHOLDS 2 0 0",
        "q1 ANSWER L3 class",
        "q2 MAYBE - -",
        "RESULTS",
        "OLD q1 L3 N class",
        "NEW q1 L3 X class",
        "OLD q7 L3 N class",
    ])
    assert diagnostics_of(text, source="input/release.txt") == [
        "input/release.txt:1: error: correctness threshold 2 is outside [0, 1] [release.threshold-range]",
        'input/release.txt:3: error: unknown TYPE "MAYBE" (expected ANSWER or REFUSE) [release.golden-type]',
        'input/release.txt:3: error: golden item "q2" has no OLD result [release.missing-result]',
        'input/release.txt:3: error: golden item "q2" has no NEW result [release.missing-result]',
        'input/release.txt:6: error: refused flag "X" must be Y or N [release.refused-flag]',
        'input/release.txt:7: error: result for "q7", which is not a golden item [release.unknown-id]',
    ]


def test_input_error_is_a_diagnostics_error_with_exit_code_2():
    assert issubclass(ReleaseInputError, DiagnosticsError)
    assert ReleaseInputError.exit_code == 2


# --- properties ---------------------------------------------------------------------------------

TOKENS = ["THRESHOLDS", "RESULTS", "ANSWER", "REFUSE", "OLD", "NEW", "Y", "N", "-", "q1", "q2", "L3",
          "class,object", "class", "0", "0.5", "1", "1.5", "x", ","]


def _token_lines():
    line = st.lists(st.sampled_from(TOKENS), max_size=6).map(" ".join)
    return st.lists(line, max_size=10).map("\n".join)


def _outcome(text: str) -> str | None:
    """Parse, decide and format; None when the input was rejected as it must be."""
    try:
        data = parse_release_input(text)
    except ReleaseInputError as error:
        assert error.diagnostics
        assert all(d.code.startswith("release.") and d.line >= 1 for d in error.diagnostics)
        return None
    out = format_release(decide_release(data))
    lines = out.split("\n")
    assert len(lines) == 4 and lines[3] == "" and lines[0].startswith("OLD: ") and lines[1].startswith("NEW: ")
    assert lines[2] == "RELEASE" or lines[2].startswith("BLOCK: ")
    return out


@settings(max_examples=300)
@given(st.text())
def test_arbitrary_text_parses_or_raises_release_input_error(text):
    _outcome(text)


@settings(max_examples=300)
@given(_token_lines())
def test_near_valid_text_parses_or_raises_release_input_error(text):
    _outcome(text)


@given(st.permutations((DATA / "seed-example.txt").read_text(encoding="utf-8").splitlines()[6:]))
def test_result_line_order_does_not_change_the_report(result_lines):
    head = (DATA / "seed-example.txt").read_text(encoding="utf-8").splitlines()[:6]
    expected = (DATA / "seed-example.out").read_text(encoding="utf-8")
    assert _outcome("\n".join([*head, *result_lines])) == expected


REASON_ORDER = [
    "correctness below threshold", "citation below threshold", "refusal below threshold", "integrity violations",
    "regression in correctness", "regression in citation", "regression in refusal",
]


@st.composite
def _valid_inputs(draw):
    """A well-formed input: random golden items, one OLD and one NEW result each, in shuffled order."""
    thresholds = " ".join(draw(st.sampled_from(["0", "0.5", "0.67", "1", "1.0"])) for _ in range(3))
    kinds = draw(st.lists(st.sampled_from(["ANSWER", "REFUSE"]), min_size=1, max_size=6))
    golden, results = [], []
    for number, kind in enumerate(kinds, start=1):
        golden.append(f"q{number} ANSWER L{number} alpha,beta" if kind == "ANSWER" else f"q{number} REFUSE - -")
        for version in ("OLD", "NEW"):
            cited = draw(st.sampled_from([f"L{number}", "L0", "-"]))
            flag = draw(st.sampled_from("YN"))
            answer = draw(st.sampled_from(["", "ALPHA and Beta", "alpha only", "betalpha"]))
            results.append(f"{version} q{number} {cited} {flag} {answer}")
    return make_input(thresholds, golden, draw(st.permutations(results)))


@given(_valid_inputs())
def test_valid_inputs_always_decide_with_reasons_in_the_fixed_order(text):
    decision = decide_release(parse_release_input(text))
    assert decision.release == (format_release(decision).splitlines()[2] == "RELEASE")
    assert list(decision.reasons) == [r for r in REASON_ORDER if r in decision.reasons]
    refuse_ids = {line.split()[0] for line in text.splitlines() if " REFUSE " in line}
    answered = sum(1 for line in text.splitlines() if line.startswith("NEW ") and line.split()[1] in refuse_ids
                   and line.split()[3] == "N")
    assert decision.new.violations == answered
    assert ("integrity violations" in decision.reasons) == (answered > 0)


@given(_valid_inputs(), st.data())
def test_dropping_or_repeating_any_line_of_a_valid_input_is_reported(text, data):
    lines = text.splitlines()
    index = data.draw(st.integers(min_value=0, max_value=len(lines) - 1))
    if data.draw(st.booleans()):
        del lines[index]
    else:
        lines.insert(index, lines[index])
    assert _outcome("\n".join(lines)) is None
