"""The bundled publication in records/ shows readers every state the method defines, and its records hold together."""

import hashlib
from dataclasses import replace
import shutil
from collections import Counter
from pathlib import Path

import pytest

from sitegen.core import model as m
from sitegen.changelog.changes import build_changelog
from sitegen.cli import main
from sitegen.load.records import load_records
from sitegen.score.results import canonical_json, read_results
from sitegen.score.scoring import score_run
from sitegen.score.seals import seal_run

RECORDS = Path(__file__).resolve().parent.parent / "records"


@pytest.fixture(scope="module")
def records() -> m.Records:
    return load_records(RECORDS)


@pytest.fixture(scope="module")
def results(records) -> dict[str, m.RunResult]:
    return {run.id: score_run(records, run.id) for run in records.published_runs}


def test_the_checked_in_results_are_a_fresh_scoring(records, results):
    recorded = read_results((RECORDS / "results.json").read_bytes())
    assert set(recorded) == set(results)
    for run_id, result in results.items():
        assert recorded[run_id] == replace(result, seal=seal_run(records, run_id)), run_id  # each sealed, and its seal holds


def test_every_state_is_reached_as_a_run_outcome_or_a_measure_state(results):
    reached = Counter()
    for result in results.values():
        reached[result.outcome] += 1
        for measure in result.measures:
            reached[measure.state] += 1
    for state in (m.PASS, m.BLOCK, m.PENDING_CONFIRMATION, m.NOT_OBSERVED, m.CRASHED_STATE):
        assert reached[state], f"no run or measure of the bundled publication is {state}"


def test_each_run_outcome_follows_from_its_measures(results):
    outcomes = {result.outcome for result in results.values()}
    assert {m.PASS, m.BLOCK, m.PENDING_CONFIRMATION, m.CRASHED_STATE} <= outcomes
    for result in results.values():
        states = [x.state for x in result.measures]
        if result.outcome == m.CRASHED_STATE:
            assert not result.measures and not result.cases and not result.observations
        elif m.BLOCK in states:
            assert result.outcome == m.BLOCK
        elif m.PENDING_CONFIRMATION in states:
            assert result.outcome == m.PENDING_CONFIRMATION
        else:
            assert result.outcome == m.PASS and m.PASS in states


def test_a_measure_can_be_not_observed_without_a_number(results):
    unobserved = [(run, x) for run, r in results.items() for x in r.measures if x.state == m.NOT_OBSERVED]
    assert unobserved
    for _, x in unobserved:
        assert x.observed == 0 and x.passed == 0


def _grounding(results, result_kind):
    return [(run, o) for run, r in results.items() for o in r.observations if o.measure == "GROUNDING" and o.result == result_kind]


def test_a_miss_dismissed_by_a_rerun(records, results):
    dismissed = _grounding(results, m.DISMISSED)
    assert dismissed
    for run, o in dismissed:
        answer = records.answers[(run, o.case_version, int(o.repetition))]
        assert answer.rerun is not None and answer.rerun.status == m.COMPLETED
        assert o.subject in {e.id for e in records.case_versions[o.case_version].key.expected}


def test_a_miss_confirmed_by_a_rerun(records, results):
    confirmed = [(run, o) for run, o in _grounding(results, m.FAILED)
                 if records.answers[(run, o.case_version, int(o.repetition))].rerun is not None]
    assert confirmed


def test_a_pending_miss_has_no_rerun(records, results):
    pending = _grounding(results, m.PENDING)
    assert pending
    for run, o in pending:
        assert records.answers[(run, o.case_version, int(o.repetition))].rerun is None
        assert next(x for x in results[run].measures if x.measure == "GROUNDING").pending > 0


def test_size_of_the_publication(records):
    assert len(records.case_versions) >= 24
    published = records.published_runs
    assert len(published) >= 4
    assert len({run.setup for run in published}) >= 2
    merges = {records.setups[run.setup].merge for run in published}
    assert merges == {True, False}, "one setup goes through the merge and one does not"
    for run in published:
        assert run.repetitions == 3, run.id
    assert len([run for run in records.runs if not run.published]) == 1


def test_completed_published_runs_have_every_answer(records):
    for run in records.published_runs:
        if run.status != m.COMPLETED:
            continue
        suite = records.suite(run.suite, run.suite_version)
        for cv in suite.case_versions:
            for rep in range(1, run.repetitions + 1):
                assert (run.id, cv, rep) in records.answers


def test_pairs_of_every_kind(records):
    assert any(p.kind == m.CONTRAST for p in records.pairs)
    assert any(p.rules_differ for p in records.pairs)
    compared = [p for p in records.pairs if p.compared]
    assert compared
    for pair in compared:
        first, second = (records.case_versions[v] for v in pair.versions)
        assert first.rules == second.rules, "an invariance pair that is compared gets the same rules"
    for pair in records.pairs:
        if pair.rules_differ:
            first, second = (records.case_versions[v] for v in pair.versions)
            assert first.rules != second.rules


def test_clean_and_flawed_case_versions_both_exist(records):
    clean = [cv for cv in records.case_versions.values() if cv.clean]
    assert clean and len(clean) < len(records.case_versions)
    assert any(cv.key.prohibited for cv in records.case_versions.values())
    assert any(e.passage is None for cv in records.case_versions.values() for e in cv.key.expected)


def test_score_all_reproduces_every_file_byte_for_byte(tmp_path, capsys):
    copy = tmp_path / "records"
    shutil.copytree(RECORDS, copy)

    def digests():
        return {p.relative_to(copy).as_posix(): hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(copy.rglob("*")) if p.is_file()}

    before = digests()
    code = main(["score", "--all", "--records", str(copy)])
    out = capsys.readouterr().out
    assert code == 0
    assert digests() == before
    records = load_records(copy)
    for run in records.published_runs:
        assert run.id in out
    assert sorted(p.name for p in copy.iterdir()) == sorted(p.name for p in RECORDS.iterdir()), "no temporary file left behind"


def test_every_version_change_is_explained_by_a_hand_written_entry(records):
    changelog = build_changelog(records)  # raises when a change is unexplained
    needed = set()
    for run in records.published_runs:
        needed.add(f"scorer:{run.scorer_version}")
        needed.add(f"report:{run.report_version}/runner:{run.runner_version}/run-record:{run.run_record_version}")
        needed.add(f"assessment:{run.assessment_version}/policy:{run.policy}")
    entries = {e.explains: e for e in records.entries if e.explains is not None}
    assert needed <= set(entries), needed - set(entries)
    for key in needed:
        (row,) = [r for r in changelog.rows if r.kind != "entry" and r.explains == key]
        assert row.explained_by is not None
        entry_row = changelog.row(row.explained_by)
        assert entry_row.kind == "entry" and entry_row.explains == key
        assert entry_row.explains_anchor == row.anchor, "the entry points back at the change it explains"


def test_scoring_a_run_that_does_not_reproduce_its_record_writes_nothing_and_places_the_difference(tmp_path, capsys):
    """A recorded result is never rewritten silently; the refusal names the file, line and pointer like every record problem."""
    import json
    import re
    import shutil

    from sitegen.cli import main

    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    index = next(i for i, r in enumerate(results["runs"]) if r["run"] == "2026-09-16-release")
    measure = next(i for i, x in enumerate(results["runs"][index]["measures"]) if x["measure"] == "GROUNDING")
    results["runs"][index]["measures"][measure]["passed"] -= 1
    (root / "results.json").write_text(json.dumps(results, indent=2, ensure_ascii=False, sort_keys=True) + "\n", encoding="utf-8")
    before = (root / "results.json").read_bytes()

    code = main(["score", "2026-09-16-release", "--records", str(root)])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    first = err.splitlines()[0]
    assert re.match(rf"{re.escape(str(root / 'results.json'))}:\d+:\d+: /runs/{index}/measures/{measure}/passed: error: "
                    r"scoring run 2026-09-16-release again does not reproduce", first), first
    assert first.endswith("[results.stale]")
    # the difference under it, a line of it per line: the entry's lines around the count, with their line numbers in it
    shown = err.rstrip("\n").splitlines()[1:]
    assert shown[:2] == ["    --- recorded 2026-09-16-release", "    +++ fresh 2026-09-16-release"], shown[:3]
    assert any(line.startswith("    -") and '"passed"' in line for line in shown[2:])
    assert any(line.startswith("    +") and '"passed"' in line for line in shown[2:]) and "\\u000a" not in err
    assert (root / "results.json").read_bytes() == before


def test_a_run_scored_with_scorer_7_has_a_pair_that_scorer_6_would_have_passed(records, results):
    # two different unexpected findings, one in each version of an invariance pair: alike by number, not by what they are
    (run,) = [run for run in records.published_runs if run.scorer_version == 7]
    failed = [o for o in results[run.id].observations if o.measure == "INVARIANT_PAIRS"]
    assert failed and {(o.subject, o.reason) for o in failed} == {("licence-gender", "unexpected")}
    as_scorer_6 = score_run(records, run.id, scorer_version=6)
    assert [o for o in as_scorer_6.observations if o.measure == "INVARIANT_PAIRS"] == []
    pairs = next(x for x in as_scorer_6.measures if x.measure == "INVARIANT_PAIRS")
    assert pairs.passed == pairs.observed > 0


@pytest.mark.parametrize("reformat", ["indent", "reordered", "final-newline"])
def test_score_all_refuses_a_reformatted_but_equal_record_instead_of_rewriting_it(tmp_path, capsys, reformat):
    """Equal values in other bytes do not "reproduce the record": it is published byte for byte, so it is refused, placed."""
    import json
    import re

    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    original = (root / "results.json").read_bytes()
    document = json.loads(original)
    if reformat == "indent":
        data = (json.dumps(document, indent=2, ensure_ascii=False, sort_keys=True) + "\n").encode("utf-8")
    elif reformat == "reordered":
        document["runs"].reverse()
        data = canonical_json(document)
    else:
        data = original.rstrip(b"\n")
    new, old = read_results(data), read_results(original)
    assert {run: new[run] for run in new} == {run: old[run] for run in old}, "the same recorded values"
    (root / "results.json").write_bytes(data)

    code = main(["score", "--all", "--records", str(root)])
    out, err = capsys.readouterr()
    assert code == 2 and "Traceback" not in err
    assert "reproduces the record" not in out
    first = err.splitlines()[0]
    assert re.match(rf"{re.escape(str(root / 'results.json'))}:\d+:\d+: error: results.json holds the recorded results in other "
                    r"bytes than sitegen writes them", first), first
    assert first.endswith("[results.not-canonical]")
    # the difference is shown under the diagnostic, a line of it per line, indented so that none reads as a diagnostic
    shown = err.rstrip("\n").splitlines()[1:]
    assert shown[:2] == ["    --- results.json (as it is)", "    +++ results.json (as sitegen writes it)"], shown[:3]
    assert shown[2].startswith("    @@ -") and all(line.startswith("    ") for line in shown) and "\\u000a" not in err
    assert (root / "results.json").read_bytes() == data, "nothing was rewritten"
