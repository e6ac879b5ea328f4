"""Times the canonical writer of results.json against C `json.dumps` of the same record, alternating them in one run.

    python benchmarks/bench_write.py RECORDS_DIR [--rounds 3]

RECORDS_DIR must hold its results.json (`sitegen score --all` once). The record is read once; then each round writes it
with `write_results` (the bytes sitegen publishes, checked equal to the file) and encodes the same runs' JSON trees
(`result_to_json`, built beforehand) with `json.dumps` and its default arguments, in alternating order, so a machine that
gets busier or quieter weighs on both alike. CPU time of this process (steadier than wall time on a shared machine).
Prints each round, the min and the median of each side, the ratio writer/dumps of the minimums and of the medians, and
the load average before and after; the last line is the whole report as JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitegen.score.results import read_results, result_to_json, write_results  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    data = (args.records / "results.json").read_bytes()
    spool = read_results(data)
    results = {run_id: spool[run_id] for run_id in spool}
    trees = [result_to_json(results[run_id]) for run_id in sorted(results)]
    if write_results(results) != data:
        raise SystemExit("write_results does not give the bytes of results.json")
    load_before = os.getloadavg()
    sides = {"write_results": lambda: write_results(results), "json.dumps": lambda: json.dumps(trees)}
    times: dict[str, list[float]] = {name: [] for name in sides}
    for round_ in range(args.rounds):
        order = list(sides) if round_ % 2 == 0 else list(reversed(sides))
        for name in order:
            started = time.process_time()
            sides[name]()
            times[name].append(time.process_time() - started)
            print(f"round {round_ + 1} {name}: {times[name][-1]:.3f} s CPU")
    load_after = os.getloadavg()
    report = {"records": str(args.records), "bytes": len(data), "rounds": args.rounds,
              "load_average": [round(load_before[0], 2), round(load_after[0], 2)]}
    for name, values in times.items():
        report[name] = {"min": round(min(values), 3), "median": round(statistics.median(values), 3)}
        print(f"{name}: min {min(values):.3f} s, median {statistics.median(values):.3f} s")
    report["ratio_min"] = round(report["write_results"]["min"] / report["json.dumps"]["min"], 2)
    report["ratio_median"] = round(report["write_results"]["median"] / report["json.dumps"]["median"], 2)
    print(f"write_results / json.dumps: {report['ratio_min']} (min), {report['ratio_median']} (median); "
          f"load average {load_before[0]:.2f} -> {load_after[0]:.2f}")
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
