"""One scoring pass (score/verify.py) serves build, check and score; the assembly is build.py's; the collector is the caller's."""

import ast
import dataclasses
import gc
import json
import shutil
from pathlib import Path

import pytest

import sitegen.score.parts as parts
import sitegen.score.scoring as scoring
from sitegen import build
from sitegen.cli import main
from sitegen.core.errors import PublicationError
from sitegen.load.records import load_records
from sitegen.load.spool import AnswerSpool, ResultSpool
from sitegen.score.results import read_results
from sitegen.score.seals import seal_run
from sitegen.score.verify import PassRequest, score_pass, score_runs, verify_published

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "records"


@pytest.fixture(scope="module")
def records():
    return load_records(RECORDS)


@pytest.fixture(scope="module")
def recorded(records):
    return read_results(records.results_json)


def _broken_twice(tmp_path: Path) -> Path:
    """Records that do not load (an unknown field in cases.json) beside a results record broken in itself (its schema)."""
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    cases["case_versions"][0]["reviewer_expectd"] = True
    (root / "cases.json").write_text(json.dumps(cases, ensure_ascii=False, indent=2), encoding="utf-8")
    results = (root / "results.json").read_text(encoding="utf-8")
    assert results.count('"format": "sitegen.results/1"') == 1
    (root / "results.json").write_text(results.replace('"format": "sitegen.results/1"', '"format": 7'), encoding="utf-8")
    return root


@pytest.mark.parametrize("command", [["build", "--out", "{out}"], ["check"], ["score", "--all"]])
def test_build_check_and_score_report_the_results_record_beside_records_that_do_not_load(tmp_path, capsys, command):
    root = _broken_twice(tmp_path)
    before = (root / "results.json").read_bytes()
    argv = [part.replace("{out}", str(tmp_path / "site")) for part in command] + ["--records", str(root)]
    code = main(argv)
    captured = capsys.readouterr()
    said = captured.out + captured.err
    assert code in (1, 2) and "Traceback" not in said
    assert "cases.json" in said and "[record.unknown-field]" in said
    assert f"{root / 'results.json'}:2:" in said and "/format" in said, said
    assert (root / "results.json").read_bytes() == before, "nothing written"


@pytest.mark.parametrize("command", [["score", "--all"], ["score", "--all", "--seal"], ["score", "2026-09-16-release"]])
@pytest.mark.parametrize("broken, line, code", [
    (lambda text: text.replace('"format": "sitegen.results/1"', '"format": 7'), 2, "record.value"),
    (lambda text: text[:100], 7, "json.syntax"),
])
def test_score_places_a_results_record_broken_in_itself_at_its_path_in_the_records(tmp_path, capsys, command, broken, line,
                                                                                   code):
    """Records that load beside a broken results record: the diagnostic names records/results.json, not a bare name the
    reader would look for in the working folder."""
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    (root / "results.json").write_text(broken((root / "results.json").read_text(encoding="utf-8")), encoding="utf-8")
    before = (root / "results.json").read_bytes()
    code_ = main([*command, "--records", str(root)])
    err = capsys.readouterr().err
    assert code_ == 2 and "Traceback" not in err
    assert err.startswith(f"{root / 'results.json'}:{line}:") and f"[{code}]" in err, err
    assert (root / "results.json").read_bytes() == before, "nothing written"


def test_one_pass_verifies_and_compares_with_one_observation_of_each_run(records, recorded, monkeypatch):
    judged = []  # (run, the case versions judged) each time a run is judged: a part of its case versions at a time
    real = parts.judge_run

    def judge(recs, run, *more, only=None):
        judged.append((run.id, tuple(cv for cv in recs.suite(run.suite, run.suite_version).case_versions
                                     if only is None or cv in only)))
        return real(recs, run, *more, only=only)

    monkeypatch.setattr(parts, "judge_run", judge)
    monkeypatch.setattr(parts, "PART", 2)
    verified = verify_published(records, recorded)
    scored = [r for r in sorted(records.published_runs, key=lambda r: (r.date, r.id)) if not scoring.run_crashed(records, r)]
    assert list(dict.fromkeys(run for run, _ in judged)) == [r.id for r in scored], "runs observed in date order"
    for run in scored:
        seen = [cv for judged_run, part in judged if judged_run == run.id for cv in part]
        suite = records.suite(run.suite, run.suite_version).case_versions
        assert sorted(seen) == sorted(suite), "each case version observed once"
    assert len(judged) > len(scored), "in parts"
    assert verified.results == {} and set(verified.differences) == {r.id for r in records.published_runs
                                                                      if recorded[r.id].scorer_version == r.scorer_version}
    assert all(d is None for d in verified.differences.values())
    assert verified.comparisons and all(c.changes == c.regressions for c in verified.comparisons.values())


def test_the_pass_is_the_same_in_one_process_and_in_two(records, recorded):
    request = PassRequest(records, recorded, compare=True)
    one, two = score_pass(request, records.published_runs), score_pass(request, records.published_runs, jobs=2)
    assert one == two and one.comparisons
    ids = tuple(r.id for r in records.runs)
    assert score_runs(records, ids, jobs=2) == score_runs(records, ids) and list(score_runs(records, ids)) == list(ids)


def test_a_stale_record_is_found_by_the_pass_and_placed(records, recorded):
    run = next(r for r in records.published_runs if not scoring.run_crashed(records, r))
    kept = recorded[run.id]
    tampered = {k: recorded[k] for k in recorded}
    tampered[run.id] = dataclasses.replace(kept, outcome="PASS" if kept.outcome != "PASS" else "BLOCK")
    with pytest.raises(PublicationError) as caught:
        verify_published(records, tampered)
    stale = [d for d in caught.value.diagnostics if d.code == "results.stale"]
    assert len(stale) == 1 and run.id in stale[0].message and stale[0].pointer.endswith("/outcome")


# --- one assembly ----------------------------------------------------------------------------------------------


def _imports(module: Path) -> set[str]:
    found = set()
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


@pytest.mark.parametrize("name", ["checks", "serving"])
def test_check_and_serve_assemble_no_phase_themselves(name):
    """They call build.py's phase functions: neither reads records, scores or builds the changelog on its own."""
    phases = {m for m in _imports(ROOT / "sitegen" / f"{name}.py")
              if m.startswith(("sitegen.load", "sitegen.score", "sitegen.changelog", "sitegen.render.catalogs"))}
    assert not phases and "sitegen.build" in _imports(ROOT / "sitegen" / f"{name}.py"), sorted(phases)


def test_the_results_record_module_only_keeps_the_format():
    imported = _imports(ROOT / "sitegen" / "score" / "results.py")
    format_writer = {"sitegen.score.entrywriter"}  # the format's own writer of an entry, itself importing no scorer
    assert not {m for m in imported if m.startswith(("sitegen.score.", "sitegen.core.workers"))} - format_writer, imported
    assert not {m for m in _imports(ROOT / "sitegen" / "score" / "entrywriter.py") if m.startswith("sitegen.score.")}


# --- the collector is the caller's ------------------------------------------------------------------------------


def test_loading_leaves_the_collector_as_it_found_it():
    gc.unfreeze()
    try:
        loaded = load_records(RECORDS, jobs=2)
        assert gc.isenabled() and gc.get_freeze_count() == 0, "load_records froze or paused the collector"
        next(iter(loaded.answers.values()))  # unpacking a run, too, is left alone
        assert gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_a_spool_left_to_itself_leaves_the_collector_alone(records):
    run = records.published_runs[0].id
    spool = AnswerSpool(keep=1)
    spool.add(a for k, a in records.answers.items() if k[0] == run)
    gc.unfreeze()
    try:
        spool[next(iter(spool))]
        assert gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.unfreeze()


def test_the_build_chooses_the_policy_for_its_load_phase():
    gc.unfreeze()
    try:
        build.load_phase(RECORDS)
        assert gc.isenabled() and gc.get_freeze_count() > 0, "the loaded records are frozen out of the collector's sight"
    finally:
        gc.unfreeze()


# --- no id()-keyed cache ------------------------------------------------------------------------------------------


def test_equal_answers_are_judged_once_whatever_object_holds_them(records, monkeypatch):
    """Verdicts are kept by the answer's value: a copy equal to an answer judged before is not judged again."""
    calls = []
    real = scoring.judge_stage
    monkeypatch.setattr(scoring, "judge_stage", lambda *args: calls.append(args) or real(*args))
    answer = next(a for a in records.answers.values() if a.answer.reviewers)
    copy = answer._replace(answer=answer.answer._replace())
    assert copy.answer == answer.answer and copy.answer is not answer.answer
    verdicts = scoring.verdict_source(records)
    first = verdicts(answer, "reviewer")
    again = verdicts(copy, "reviewer")
    assert again == first and len(calls) == 1


@pytest.mark.parametrize("compare", [False, True])
def test_a_pass_prepares_each_case_version_once_for_all_its_runs(records, recorded, monkeypatch, compare):
    # what matching derives from a case version alone (its collapsed document, the key by identity) does not depend on the
    # run: a pass over several runs of one suite prepares each case version once, not once a run
    import sitegen.score.matching as matching
    prepared = []
    real = matching.DocumentText
    monkeypatch.setattr(matching, "DocumentText", lambda document: prepared.append(document) or real(document))
    runs = tuple(r for r in records.published_runs if not scoring.run_crashed(records, r))
    assert len(runs) > 1
    score_pass(PassRequest(records, recorded if compare else None, compare=compare), runs)
    in_suites = {cv for run in runs for cv in records.suite(run.suite, run.suite_version).case_versions}
    assert len(prepared) == len(in_suites), f"{len(prepared)} preparations for {len(in_suites)} case versions"


def test_the_prepared_cases_give_the_same_results_as_a_fresh_preparation_for_each_run(records):
    ids = tuple(r.id for r in records.runs)
    assert score_runs(records, ids) == {run_id: scoring.score_run(records, run_id) for run_id in ids}


def test_sealed_fresh_results_are_kept_packed_and_equal_the_unsealed_ones_with_their_seals(records):
    # `sitegen score` holds every run's fresh results until it writes them: packed as they come (at 10,000 case versions
    # 715 MiB at the peak instead of 1,021), each sealed as the records stand
    ids = tuple(r.id for r in records.published_runs)
    sealed = score_runs(records, ids, sealed=True)
    plain = score_runs(records, ids)
    assert isinstance(sealed, ResultSpool) and sorted(sealed) == sorted(ids)
    for run_id in ids:
        assert sealed[run_id] == dataclasses.replace(plain[run_id], seal=seal_run(records, run_id))


def test_score_all_writes_the_record_it_would_reproduce_run_by_run(tmp_path, capsys):
    """Scored afresh, the record is written from the packed results run by run; its bytes are the bundled record's."""
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    (root / "results.json").unlink()
    assert main(["score", "--all", "--records", str(root)]) == 0
    assert (root / "results.json").read_bytes() == (RECORDS / "results.json").read_bytes()
    assert not (root / ".results.json.tmp").exists()


def test_a_record_that_fails_to_be_written_leaves_the_old_one_and_no_temporary_file(tmp_path, monkeypatch):
    import sitegen.score.verify as verify

    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    results = json.loads((root / "results.json").read_text(encoding="utf-8"))
    results["runs"] = results["runs"][:1]  # the other runs are added, so the record is written again
    (root / "results.json").write_bytes(verify.write_results(read_results(json.dumps(results).encode("utf-8"))))
    before = (root / "results.json").read_bytes()

    real = verify.results_pieces

    def failing(records):
        yield next(iter(real(records)))
        raise OSError("disk full")

    monkeypatch.setattr(verify, "results_pieces", failing)
    with pytest.raises(OSError):
        verify.score_into_record(load_records(root), root, run_ids=None)
    assert (root / "results.json").read_bytes() == before, "the old record stays as it was"
    assert not (root / ".results.json.tmp").exists(), "nothing half-written is left behind"
