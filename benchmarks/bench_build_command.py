"""Times `sitegen build` end to end as a maintainer runs it: the command line, in its own process, into a fresh folder.

    python benchmarks/bench_build_command.py RECORDS_DIR [--jobs N] [--detail-runs K]

bench_build.py times `build_site` inside its own process, and only the options every commit it is compared on has; this
runs the command itself, so it measures any commit whose command line has the options given (compare_commits.py sets
the sitegen on the path per commit, and falls back to this script for a commit older than it). RECORDS_DIR must hold
scored results (`sitegen score --all`). The site goes into a temporary folder, removed after. Prints a line for people,
then one JSON line with `wall_seconds`, `cpu_seconds` (user and system time of the command and its worker processes)
and `peak_rss_mib` (the largest of them; benchmarks/peak_memory.py measures the whole process tree).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--detail-runs", type=int, default=None, help="passed on to `sitegen build`")
    args = parser.parse_args(argv)
    if not (args.records / "results.json").is_file():
        raise SystemExit(f"{args.records} has no results.json: run `sitegen score --all --records {args.records}` first")
    with tempfile.TemporaryDirectory(prefix="sitegen-bench-") as tmp:
        command = [sys.executable, "-m", "sitegen", "build", "-q", "--records", str(args.records),
                   "--out", str(Path(tmp) / "site"), "--jobs", str(args.jobs)]
        if args.detail_runs is not None:
            command += ["--detail-runs", str(args.detail_runs)]
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command, capture_output=True, text=True, env=dict(os.environ))
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({done.returncode}):\n{done.stdout}{done.stderr}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    report = {"records": str(args.records), "jobs": args.jobs, "detail_runs": args.detail_runs,
              "wall_seconds": round(wall, 2), "cpu_seconds": round(cpu, 2), "peak_rss_mib": round(after.ru_maxrss / 1024)}
    print(f"sitegen build --jobs {args.jobs}" + (f" --detail-runs {args.detail_runs}" if args.detail_runs is not None else "")
          + f": {wall:.2f} s wall, {cpu:.2f} s CPU, peak RSS {report['peak_rss_mib']} MiB")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
