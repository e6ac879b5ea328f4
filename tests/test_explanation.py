"""`sitegen explain` gives, for each example case of the method page, the reason the method page gives for it."""

import re
from pathlib import Path

import pytest

from sitegen.core import model as m
from sitegen.cli import main
from sitegen.load.records import load_records
from sitegen.core.text import collapse

RECORDS = Path(__file__).resolve().parent.parent / "records"
RUN = "2026-09-16-release"


@pytest.fixture(scope="module")
def records() -> m.Records:
    return load_records(RECORDS)


def explain(capsys, case: str, *extra: str) -> str:
    code = main(["explain", "--records", str(RECORDS), RUN, case, *extra])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert err == ""
    return out


def sections(out: str) -> dict[tuple[int, str], str]:
    """The text under each `repetition N, STAGE stage:` heading (reruns included in their repetition's section)."""
    parts = re.split(r"^repetition (\d+), (\w+) stage:$", out, flags=re.M)
    return {(int(parts[i]), parts[i + 1]): parts[i + 2] for i in range(1, len(parts) - 1, 3)}


def not_passed(out: str) -> list[str]:
    head, _, tail = out.partition("observations of this case that did not plainly pass:\n")
    # one line per observation; the deeper-indented lines under one list its differences
    return [line.strip() for line in tail.splitlines() if line.strip() and not line.startswith("   ")]


def test_the_seven_example_cases_exist(records):
    for case in ("cure-unchecked", "tap-sample", "seal-detail-missing", "figure-without-document", "request-refused",
                 "licence-gender-flawed-feminine", "papers-location-unstated"):
        assert case in records.case_versions
        assert case in records.suite("controlled-regression", 1).case_versions


def test_grounding_rule_named_but_another_sentence_quoted(capsys, records):
    """Method page: a finding that names the rule but quotes another sentence found the rule, not the passage: a miss."""
    out = explain(capsys, "cure-unchecked")
    (expected,) = records.case_versions["cure-unchecked"].key.expected
    missed = [(key, text) for key, text in sections(out).items() if f"expected {expected.id} " in text and "MISSED" in text]
    assert missed
    for _, text in missed:
        miss = next(line for line in text.splitlines() if line.strip().startswith(f"expected {expected.id} ") and "MISSED" in line)
        assert "the rule was named" in miss and "does not point at the passage" in miss
        closest = re.search(r'closest finding \S+, quotes "([^"]+)"', text)
        assert closest, "the finding that came closest is shown with what it quoted"
        assert collapse(closest.group(1)) != collapse(expected.passage.quote), "it quoted another sentence"
        assert f'"{expected.passage.quote}"' in text, "the key's passage is shown next to it"
        assert all(rule in miss for rule in expected.rules), "the rules the key accepts are named"
    failed = [line for line in not_passed(out) if line.startswith("GROUNDING FAILED")]
    assert failed and all(expected.id in line and "confirmed by rerun" in line for line in failed)


def test_clean_case_flaws_a_flaw_on_a_clean_case(capsys, records):
    """Method page: the rule about depth does not reach a tap sample; reporting a missing depth is a flaw on a clean case."""
    assert records.case_versions["tap-sample"].clean
    out = explain(capsys, "tap-sample")
    failed = [line for line in not_passed(out) if line.startswith("CLEAN_CASE_FLAWS FAILED")]
    assert failed
    for line in failed:
        assert "flaw(s) reported on a clean case" in line
    unexpected_flaws = re.findall(r"finding (\S+) \(flaw, [^)]*\): unexpected", out)
    assert unexpected_flaws, "the flaw itself is shown"


def test_prohibited_output_the_prohibited_finding_occurs(capsys, records):
    """Method page: praising the seals sentence is the prohibited finding in the key, even if the expected one was also found."""
    cv = records.case_versions["seal-detail-missing"]
    (prohibited,) = cv.key.prohibited
    (expected,) = cv.key.expected
    out = explain(capsys, "seal-detail-missing")
    assert f"PROHIBITED: matches prohibited finding {prohibited.id} of the key" in out
    failed = [line for line in not_passed(out) if line.startswith("PROHIBITED_OUTPUT FAILED")]
    assert failed and all(prohibited.id in line for line in failed)
    # the expected finding was found too; that does not save the observation
    for (rep, stage), text in sections(out).items():
        if f"prohibited finding {prohibited.id}" in text:
            assert f"expected {expected.id} " in text and "matched by" in text
            assert any(line.startswith(f"PROHIBITED_OUTPUT FAILED (repetition {rep}, {stage},") for line in failed)


def test_quote_fidelity_the_quote_is_not_in_the_document(capsys, records):
    """Method page: rewording the sentence inside quotation marks fails, even when the finding itself is right."""
    document = records.case_versions["figure-without-document"].document
    out = explain(capsys, "figure-without-document")
    reported = re.findall(r'quote of (\S+) is NOT in the document: "([^"]+)"', out)
    assert reported
    for _, quote in reported:
        assert collapse(quote) not in collapse(document)
    failed = [line for line in not_passed(out) if line.startswith("QUOTE_FIDELITY FAILED")]
    assert failed and all("quote not in the document" in line for line in failed)
    assert {q for _, q in reported} == {re.search(r'"(.+)"$', line).group(1) for line in failed}


def test_reducer_survival_lost_in_the_merge(capsys, records):
    """Method page: a reviewer reports the missing reasons, and the delivered report no longer has that finding."""
    (expected,) = records.case_versions["request-refused"].key.expected
    out = explain(capsys, "request-refused")
    failed = [line for line in not_passed(out) if line.startswith("REDUCER_SURVIVAL FAILED")]
    assert failed
    for line in failed:
        assert expected.id in line
        assert "reported it, but the delivered report no longer matches it" in line
        rep = int(re.search(r"\(repetition (\d+),", line).group(1))
        parts = sections(out)
        reviewer, report = parts[(rep, "reviewer")], parts[(rep, "report")]
        assert re.search(rf"expected {expected.id} \([^)]*\): matched by", reviewer), "a reviewer reported it"
        assert re.search(rf"expected {expected.id} \([^)]*\): MISSED", report), "the delivered report lost it"


def test_invariant_pairs_the_two_versions_read_differently(capsys, records):
    """Method page: reporting the missing case officer for one form of address but not the other is a material change."""
    (pair,) = [p for p in records.pairs if "licence-gender-flawed-feminine" in p.versions]
    assert pair.compared
    out = explain(capsys, "licence-gender-flawed-feminine")
    failed = [line for line in not_passed(out) if line.startswith("INVARIANT_PAIRS FAILED")]
    assert failed
    for line in failed:
        assert pair.id in line
        first, second = pair.versions
        assert f"{first} reads found" in line and f"{second} reads not found" in line or \
            f"{second} reads found" in line and f"{first} reads not found" in line


def test_an_invariance_pairs_observation_is_named_by_its_pair_and_shown_whichever_stage_is_asked_for(capsys):
    """It compares the pair's versions in every stage and the merge (METHOD.md): the stage the results record gives it
    is only its first difference's, so it is not named ("repetition 2, reviewer, licence-gender" read as a difference of
    the reviewers alone) and `--stage report` keeps it (it hid the pair's differences in the report and the merge)."""
    for stage in ((), ("--stage", "reviewer"), ("--stage", "report")):
        out = explain(capsys, "licence-gender-flawed-masculine", "--repetition", "2", *stage)
        (line,) = [line for line in not_passed(out) if line.startswith("INVARIANT_PAIRS FAILED")]
        assert line.startswith("INVARIANT_PAIRS FAILED (repetition 2, pair licence-gender): reviewer:handler-missing: "), line
        assert "every difference (3):" in out and "      merge:handler-missing: " in out


def test_identical_input_stability_the_repetitions_disagree(capsys, records):
    """Method page: nothing to quote; one repetition quotes an unrelated closing sentence while the others quote nothing."""
    (expected,) = records.case_versions["papers-location-unstated"].key.expected
    assert expected.passage is None
    out = explain(capsys, "papers-location-unstated")
    failed = [line for line in not_passed(out) if line.startswith("IDENTICAL_INPUT_STABILITY FAILED")]
    assert failed
    for line in failed:
        found = re.search(r"repetition (\d+) gives (matched|missed), repetition (\d+) gives (matched|missed)", line)
        assert found and found.group(2) != found.group(4), line
    parts = sections(out)
    outcomes = {rep: "MISSED" not in text.split("rerun of repetition")[0] for (rep, stage), text in parts.items() if stage == "reviewer"}
    assert set(outcomes.values()) == {True, False}, "some repetitions match it and some do not"
    (odd,) = [rep for rep, ok in outcomes.items() if not ok]
    assert "the key expects something wholly absent" in parts[(odd, "reviewer")]
    assert "quotes or locates a passage where nothing is to be quoted" in parts[(odd, "reviewer")]
    assert "does not point at the passage" not in parts[(odd, "reviewer")]  # it has none
    assert re.search(r'closest finding \S+, quotes "', parts[(odd, "reviewer")]), "the odd repetition quoted a sentence"


def test_explain_can_narrow_to_one_repetition_and_stage(capsys):
    out = explain(capsys, "request-refused", "--repetition", "1", "--stage", "report")
    assert set(sections(out)) == {(1, "report")}
    assert all("(repetition 1, report," in line or "(repetition 1-" in line for line in not_passed(out))


def _refused(capsys, *argv: str) -> str:
    code = main(["explain", *argv])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", out
    assert err.startswith("error: ") and "Traceback" not in err
    return err


@pytest.mark.parametrize("repetition", ["0", "-1", "4"])
def test_a_repetition_the_run_does_not_have_is_refused(capsys, repetition):
    err = _refused(capsys, "--records", str(RECORDS), RUN, "tap-sample", "--repetition", repetition)
    assert f"repetition {repetition}" in err and "1 to 3" in err and RUN in err


def test_a_case_version_outside_the_runs_suite_is_refused(capsys, tmp_path):
    """A case version of another suite is known to the records, but the run never saw it: nothing to explain."""
    import json
    import shutil

    small = Path(__file__).parent / "data" / "records-small"
    root = tmp_path / "records"
    shutil.copytree(small, root)
    cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    other = dict(cases["case_versions"][0], id="leak-unchecked-other")
    cases["case_versions"].append(other)
    cases["suites"].append({"id": "other", "version": 1, "title": "Another suite", "case_versions": [other["id"]]})
    (root / "cases.json").write_text(json.dumps(cases, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    assert "leak-unchecked-other" in load_records(root).case_versions
    err = _refused(capsys, "--records", str(root), "r1", "leak-unchecked-other")
    assert '"leak-unchecked-other"' in err and "r1" in err and "mini version 1" in err


def test_explain_lists_every_difference_of_a_comparison(capsys, records):
    """Issue 17: the record's detail names the first difference and "(+N more difference(s))"; explain lists them all."""
    from sitegen.score.results import read_results

    recorded = [o for o in read_results(records.results_json)[RUN].observations
                if o.case_version == "papers-location-unstated" and o.measure == "IDENTICAL_INPUT_STABILITY"]
    more = [o for o in recorded if "more difference" in o.detail]
    assert more, "the bundled run has comparisons with more than one difference"
    out = explain(capsys, "papers-location-unstated")
    block = out.split("observations of this case that did not plainly pass:\n")[1]
    for o in more:
        head = f"{o.measure} FAILED (repetition {o.repetition}, {o.stage}, {o.subject}): {o.detail}\n"
        listed = block.split(head, 1)[1].split("\n  IDENTICAL", 1)[0].splitlines()
        hidden = int(re.search(r"\+(\d+) more", o.detail).group(1))
        assert listed[0].strip() == f"every difference ({hidden + 1}):"
        differences = [line.strip() for line in listed[1:]]
        assert len(differences) == hidden + 1 and differences[0] == o.detail.split(" (+")[0]
        assert all(re.fullmatch(r"\S+: repetition \d gives \S+, repetition \d gives \S+", d) for d in differences)
