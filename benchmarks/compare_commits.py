"""Compares two commits on the same records with the load, score and build benchmarks, alternating them in one run.

    python benchmarks/compare_commits.py OLD NEW RECORDS_DIR [--rounds 3] [--jobs 2]
        [--only load score build build_command score_all] [--detail-runs K]

Each commit is checked out into a temporary worktree and its own benchmark scripts run there (so a commit that
moved modules is measured with the imports it has). The order within a round alternates (old, new; then new,
old; ...) so that a machine that gets busier or quieter during the run weighs on both sides alike. It prints,
per benchmark and side, the figure of each round, the min and the median, and the ratio new/old of the medians
and of the minimums; and the load average before and after, to say how busy the machine was. RECORDS_DIR must
hold scored results (`sitegen score --all`). `build_command` times `sitegen build` as a maintainer runs it, the only
benchmark `--detail-runs` is passed to (the commits compared must both have that option). The last line is the whole
report as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

# benchmark -> (arguments after the records folder, the figure taken from its JSON line, whether lower is better)
BENCHMARKS = {
    "load": (["--jobs", "{jobs}"], lambda r: r["wall_seconds"], "s", True),
    "score": (["--jobs", "1"], lambda r: r["scoring"][0]["findings_per_second_per_core"], "findings/s per core", False),
    "build": (["--jobs", "{jobs}"], lambda r: r["build_seconds"], "s", True),
    "build_command": (["--jobs", "{jobs}"], lambda r: r["wall_seconds"], "s", True),
    # end to end as a user runs it; CPU seconds of the command and its workers, steadier than wall time when shared
    "score_all": (["--jobs", "1"], lambda r: r["cpu_seconds"], "s CPU", True),
}
MEMORY = {"load": "peak_rss_mib", "score": "peak_rss_mib", "build": "peak_rss_mib", "build_command": "peak_rss_mib",
          "score_all": "peak_rss_mib"}


def worktree(commit: str, folder: Path) -> Path:
    subprocess.run(["git", "-C", str(REPO), "worktree", "add", "--detach", "--quiet", str(folder), commit], check=True)
    return folder


def run_benchmark(tree: Path, name: str, records: Path, jobs: int, detail_runs: int | None = None) -> dict:
    args, _, _, _ = BENCHMARKS[name]
    script = tree / "benchmarks" / f"bench_{name}.py"
    if not script.exists():  # a benchmark newer than the commit: this checkout's script, timing the commit's code
        script = REPO / "benchmarks" / f"bench_{name}.py"
    command = [sys.executable, str(script), str(records)] + [a.format(jobs=jobs) for a in args]
    if name == "build_command" and detail_runs is not None:
        command += ["--detail-runs", str(detail_runs)]
    env = dict(os.environ, PYTHONPATH=str(tree))
    done = subprocess.run(command, capture_output=True, text=True, env=env, cwd=tree)
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed in {tree}:\n{done.stdout}{done.stderr}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def summary(values: list[float]) -> dict:
    return {"rounds": values, "min": min(values), "median": statistics.median(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("records", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", nargs="+", choices=sorted(BENCHMARKS), default=["load", "score", "build"])
    parser.add_argument("--detail-runs", type=int, default=None, help="passed to `sitegen build` by build_command")
    args = parser.parse_args(argv)
    if args.detail_runs is not None and "build_command" not in args.only:
        parser.error("--detail-runs is passed only to the build_command benchmark: add it to --only")
    records = args.records.resolve()
    report: dict = {"old": args.old, "new": args.new, "records": str(records), "detail_runs": args.detail_runs,
                    "load_average_before": os.getloadavg()}
    with tempfile.TemporaryDirectory(prefix="sitegen-compare-") as tmp:
        trees = {"old": worktree(args.old, Path(tmp) / "old"), "new": worktree(args.new, Path(tmp) / "new")}
        try:
            for name in args.only:
                _, figure, unit, lower_is_better = BENCHMARKS[name]
                values: dict[str, list[float]] = {"old": [], "new": []}
                memory: dict[str, list[float]] = {"old": [], "new": []}
                for round_number in range(args.rounds):
                    order = ("old", "new") if round_number % 2 == 0 else ("new", "old")
                    for side in order:
                        result = run_benchmark(trees[side], name, records, args.jobs, args.detail_runs)
                        values[side].append(figure(result))
                        memory[side].append(result[MEMORY[name]])
                        print(f"{name} round {round_number + 1} {side}: {figure(result)} {unit}, peak RSS {result[MEMORY[name]]} MiB",
                              flush=True)
                old, new = summary(values["old"]), summary(values["new"])
                entry = {"unit": unit, "lower_is_better": lower_is_better, "old": old, "new": new,
                         "ratio_new_to_old_median": round(new["median"] / old["median"], 3),
                         "ratio_new_to_old_min": round(new["min"] / old["min"], 3),
                         "peak_rss_mib": {"old": summary(memory["old"]), "new": summary(memory["new"])}}
                report[name] = entry
                print(f"{name}: old min {old['min']} median {old['median']}; new min {new['min']} median {new['median']} {unit}; "
                      f"new/old {entry['ratio_new_to_old_median']} (medians), {entry['ratio_new_to_old_min']} (minimums)", flush=True)
        finally:
            for tree in trees.values():
                subprocess.run(["git", "-C", str(REPO), "worktree", "remove", "--force", str(tree)], check=False)
    report["load_average_after"] = os.getloadavg()
    print(f"load average before {report['load_average_before']}, after {report['load_average_after']}")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
