"""With --jobs N, verifying the published runs takes N processes, the verifying one among them; scoring into the record
(`sitegen score`, whose calling process writes the record meanwhile) forks N workers."""

import os
from pathlib import Path

from sitegen.load.records import load_records
from sitegen.score import verify
from sitegen.score.results import read_results

RECORDS = Path(__file__).resolve().parent.parent / "records"


def _scoring_processes(monkeypatch, tmp_path, call) -> set[int]:
    """The processes that scored a run during `call()`, each noted in a file (workers are forked after the patch)."""
    noted = tmp_path / "pids"
    original = verify._score_one

    def score_one(request, run_id):
        with noted.open("a", encoding="utf-8") as out:
            out.write(f"{os.getpid()}\n")
        return original(request, run_id)

    monkeypatch.setattr(verify, "_score_one", score_one)
    call()
    return {int(line) for line in noted.read_text(encoding="utf-8").split()}


def test_verifying_with_two_jobs_scores_in_this_process_and_one_worker(monkeypatch, tmp_path):
    records = load_records(RECORDS)
    assert len(records.published_runs) >= 4
    recorded = read_results(records.results_json)
    alone = verify.verify_published(records, recorded, jobs=1)
    pids = _scoring_processes(monkeypatch, tmp_path, lambda: verify.verify_published(records, recorded, jobs=2))
    assert os.getpid() in pids and len(pids) == 2
    again = verify.verify_published(records, recorded, jobs=2)
    assert again.comparisons == alone.comparisons and again.reasons == alone.reasons and again.differences == alone.differences


def test_scoring_into_the_record_with_two_jobs_leaves_the_scoring_to_two_workers(monkeypatch, tmp_path):
    records = load_records(RECORDS)
    runs = tuple(r.id for r in records.published_runs)
    pids = _scoring_processes(monkeypatch, tmp_path, lambda: verify.score_runs(records, runs, jobs=2))
    assert os.getpid() not in pids and len(pids) == 2
