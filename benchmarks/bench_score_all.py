"""Times `sitegen score --all` end to end (loading, scoring, checking and writing results.json) as a user runs it.

    python benchmarks/bench_score_all.py RECORDS_DIR [--jobs N]

RECORDS_DIR must hold its results.json already (`sitegen score --all` once), so the command reproduces it and writes
nothing: what is timed is the loading, the scoring (seals included) and the check of the record's bytes (each run's entry
laid out where it was scored, the record checked against its length and SHA-256) a maintainer pays for at every run.
The command runs as a subprocess of this Python with the sitegen found on its path (compare_commits.py sets it per
commit). Prints a line for people, then one JSON line with `wall_seconds`, `cpu_seconds` (user and system time of the
command and its worker processes: steadier than wall time on a shared machine) and `peak_rss_mib` (the largest of them).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if not (args.records / "results.json").is_file():
        raise SystemExit(f"{args.records} has no results.json: run `sitegen score --all --records {args.records}` first")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "sitegen", "score", "--all", "--records", str(args.records),
                           "--jobs", str(args.jobs)], capture_output=True, text=True, env=dict(os.environ))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"sitegen score --all failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    reproduced = done.stdout.count("(reproduces the record")  # "; sealed" or "; not sealed ..." may follow
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = {"records": str(args.records), "jobs": args.jobs, "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2),
              "peak_rss_mib": round(after.ru_maxrss / 1024), "runs_reproduced": reproduced}
    print(f"score --all --jobs {args.jobs}: {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {report['peak_rss_mib']} MiB, "
          f"{reproduced} runs reproduced")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
