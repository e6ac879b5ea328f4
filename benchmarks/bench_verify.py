"""Times `sitegen verify` on a built site against `sitegen build` of the same records, alternating them in one run.

    python benchmarks/bench_verify.py RECORDS_DIR SITE_DIR [--rounds 3] [--jobs 2] [--pages] [--url]

SITE_DIR is the site `sitegen build --records RECORDS_DIR --out SITE_DIR` wrote. Each round runs both commands as a
reader would (one subprocess each), in alternating order (build, verify; then verify, build; ...) so a machine that
gets busier or quieter weighs on both alike. With --url, verify reads the site over HTTP from a local server on
127.0.0.1 (in this process, in a thread). It prints each round's wall time and peak RSS, the min and median of each
side, the ratio verify/build of the medians and of the minimums, and the load average before and after; the last
line is the whole report as JSON.
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


def timed(command: list[str]) -> tuple[float, float]:
    """Wall seconds and peak RSS (MiB) of one command, which must succeed."""
    started = time.perf_counter()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = process.communicate()
    seconds = time.perf_counter() - started
    if process.returncode != 0:
        raise SystemExit(f"{' '.join(command)} failed ({process.returncode}):\n{out.decode()[-3000:]}{err.decode()[-3000:]}")
    return seconds, _peak_rss(out)


def _peak_rss(out: bytes) -> float:
    """The last line the wrapper printed: the largest peak RSS of the command and its worker processes."""
    return float(out.decode().strip().splitlines()[-1])


def wrapped(command: list[str]) -> list[str]:
    """The command run through a small Python wrapper that prints the child's peak RSS in MiB as its last line."""
    code = ("import resource, subprocess, sys; p = subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL); "
            "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024); sys.exit(p.returncode)")
    return [sys.executable, "-c", code, *command]


def summary(values: list[float]) -> dict:
    return {"rounds": values, "min": min(values), "median": statistics.median(values)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("site", type=Path)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--pages", action="store_true", help="verify --pages (rebuilds and compares every page)")
    parser.add_argument("--url", action="store_true", help="verify over HTTP from a local server")
    args = parser.parse_args(argv)
    sitegen = [sys.executable, "-m", "sitegen"]
    report: dict = {"records": str(args.records), "site": str(args.site), "pages": args.pages, "url": args.url,
                    "jobs": args.jobs, "load_average_before": os.getloadavg()}
    server = None
    source = str(args.site / "downloads")
    if args.url:
        server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(args.site)))
        threading.Thread(target=server.serve_forever, daemon=True).start()
        source = f"http://127.0.0.1:{server.server_address[1]}/"
    figures: dict[str, dict[str, list[float]]] = {"build": {"s": [], "mib": []}, "verify": {"s": [], "mib": []}}
    with tempfile.TemporaryDirectory(prefix="bench-verify-") as tmp:
        commands = {
            "build": sitegen + ["build", "--records", str(args.records), "--out", str(Path(tmp) / "site"), "--quiet",
                                "--jobs", str(args.jobs)],
            "verify": sitegen + ["verify", source, "--jobs", str(args.jobs)] + (["--pages"] if args.pages else []),
        }
        for round_ in range(args.rounds):
            order = ("build", "verify") if round_ % 2 == 0 else ("verify", "build")
            for side in order:
                seconds, mib = timed(wrapped(commands[side]))
                figures[side]["s"].append(round(seconds, 2))
                figures[side]["mib"].append(round(mib, 1))
                print(f"round {round_ + 1} {side}: {seconds:.2f} s, peak RSS {mib:.0f} MiB", flush=True)
    if server is not None:
        server.shutdown()
    report["load_average_after"] = os.getloadavg()
    for side in figures:
        report[side] = {"seconds": summary(figures[side]["s"]), "peak_rss_mib": summary(figures[side]["mib"])}
    report["verify_over_build"] = {
        "median": round(report["verify"]["seconds"]["median"] / report["build"]["seconds"]["median"], 2),
        "min": round(report["verify"]["seconds"]["min"] / report["build"]["seconds"]["min"], 2),
    }
    for side in figures:
        s = report[side]["seconds"]
        print(f"{side}: min {s['min']:.2f} s, median {s['median']:.2f} s; peak RSS median {report[side]['peak_rss_mib']['median']:.0f} MiB")
    print(f"verify/build: {report['verify_over_build']['median']} (medians), {report['verify_over_build']['min']} (minimums)")
    print(f"load average before {report['load_average_before']}, after {report['load_average_after']}")
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
