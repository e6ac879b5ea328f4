"""Times scoring on a synthetic publication: findings per second per core, peak memory, and jobs N == jobs 1.

    python benchmarks/bench_score.py RECORDS_DIR [--jobs 2] [--runs K]

Per core, jobs 1 divides by the process's CPU time (robust when other work shares the machine); jobs N by
wall time times N. Loading is timed separately (bench_load.py); here the clock runs only while runs are scored, one run at a
time, so memory should not grow with the number of runs scored. With --jobs N the runs are scored in N
processes and the results are checked to be identical to scoring them in one.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitegen.core import model as m  # noqa: E402
from sitegen.core.collector import collector_paused, frozen_when_made  # noqa: E402
from sitegen.load.records import load_records  # noqa: E402
from sitegen.score.verify import score_runs  # noqa: E402


def peak_rss_mib() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def count_findings(records: m.Records, run_ids: tuple[str, ...]) -> int:
    wanted = set(run_ids)
    total = 0
    for (run_id, _, _), answer in records.answers.items():
        if run_id in wanted:
            total += sum(len(r.findings) for r in answer.answer.reviewers) + len(answer.answer.report or ())
    return total


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--runs", type=int, default=None, help="score only the first K runs")
    args = parser.parse_args(argv)

    started = time.perf_counter()
    with frozen_when_made():  # the collector policy build.load_phase applies
        records = load_records(args.records, unpacking=frozen_when_made)
    loaded = time.perf_counter() - started
    rss_loaded = peak_rss_mib()
    run_ids = tuple(r.id for r in records.published_runs)[: args.runs]
    findings = count_findings(records, run_ids)

    rows = []
    first = None
    for jobs in sorted({1, args.jobs}):
        started, cpu_started = time.perf_counter(), time.process_time()
        with collector_paused():  # the policy `sitegen score` applies around scoring
            results = score_runs(records, run_ids, jobs=jobs, packed=True)  # kept packed, as `sitegen score` keeps them
        seconds = time.perf_counter() - started
        cpu = time.process_time() - cpu_started  # this process only: meaningful for jobs 1, where it is the scorer's own time
        digests = {k: results.digest(k) for k in results}  # each result's SHA-256, without unpacking them all at once
        if first is None:
            first = digests
        identical = digests == first
        per_core = findings / cpu if jobs == 1 else findings / seconds / jobs
        rows.append({"jobs": jobs, "seconds": round(seconds, 2), "cpu_seconds": round(cpu, 2) if jobs == 1 else None, "findings": findings,
                     "findings_per_second": round(findings / seconds), "findings_per_second_per_core": round(per_core),
                     "identical_to_jobs_1": identical})
    report = {"records": str(args.records), "case_versions": len(records.case_versions), "runs": len(run_ids),
              "answers": len(records.answers), "load_seconds": round(loaded, 1), "peak_rss_mib_after_load": round(rss_loaded),
              "peak_rss_mib": round(peak_rss_mib()), "scoring": rows}
    print(f"{len(records.case_versions)} case versions, {len(run_ids)} runs, {findings} findings (load {loaded:.1f} s)")
    print(f"{'jobs':>4} {'seconds':>8} {'findings/s':>11} {'per core':>9} identical")
    for row in rows:
        print(f"{row['jobs']:>4} {row['seconds']:>8} {row['findings_per_second']:>11} {row['findings_per_second_per_core']:>9} "
              f"{row['identical_to_jobs_1']}")
    print(f"peak RSS {report['peak_rss_mib_after_load']} MiB after loading, {report['peak_rss_mib']} MiB after scoring")
    print(json.dumps(report, sort_keys=True))
    return 0 if all(r["identical_to_jobs_1"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
