"""Times `load_records` on one records folder and reports its peak memory, to see how loading scales.

Usage: python benchmarks/bench_load.py OUT_DIR [--jobs N] [--tracemalloc]

Prints a small table and then one JSON line (for collecting figures from several runs).
Run it in a fresh process per folder: ru_maxrss is the peak of the whole process. With --jobs N the answers files
are read in N worker processes; the largest worker's peak is reported beside the loading process's.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import sys
import time
import tracemalloc
from dataclasses import asdict, dataclass
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from sitegen.core.errors import SitegenError  # noqa: E402
from sitegen.core.collector import frozen_when_made  # noqa: E402
from sitegen.load.records import load_records  # noqa: E402

MIB = 1024 * 1024


@dataclass(frozen=True)
class LoadFigures:
    path: str
    size_mib: float  # bytes of the records folder on disk
    case_versions: int
    runs: int
    answers: int
    jobs: int
    wall_seconds: float
    baseline_rss_mib: float  # peak RSS before loading (interpreter and imports)
    peak_rss_mib: float
    worker_peak_rss_mib: float  # the largest child process (the workers, with jobs > 1)
    tracemalloc_peak_mib: float | None
    cpus: int
    python: str


def folder_size(path: Path) -> int:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file())


def peak_rss_mib(who: int = resource.RUSAGE_SELF) -> float:
    # Linux reports ru_maxrss in KiB, macOS in bytes.
    scale = 1 if sys.platform == "darwin" else 1024
    return resource.getrusage(who).ru_maxrss * scale / MIB


def measure_load(path: Path, *, jobs: int = 1, trace: bool = False) -> LoadFigures:
    """Loads the folder once, timing the wall clock and reading the process's peak memory."""
    baseline = peak_rss_mib()
    if trace:
        tracemalloc.start()
    start = time.perf_counter()
    with frozen_when_made():  # the collector policy build.load_phase applies (this script imports the loader alone)
        records = load_records(path, jobs=jobs, unpacking=frozen_when_made)
    wall = time.perf_counter() - start
    traced = None
    if trace:
        traced = tracemalloc.get_traced_memory()[1] / MIB
        tracemalloc.stop()
    return LoadFigures(
        path=str(path),
        size_mib=round(folder_size(path) / MIB, 1),
        case_versions=len(records.case_versions),
        runs=len(records.runs),
        answers=len(records.answers),
        jobs=jobs,
        wall_seconds=round(wall, 2),
        baseline_rss_mib=round(baseline, 1),
        peak_rss_mib=round(peak_rss_mib(), 1),
        worker_peak_rss_mib=round(peak_rss_mib(resource.RUSAGE_CHILDREN), 1),
        tracemalloc_peak_mib=None if traced is None else round(traced, 1),
        cpus=os.cpu_count() or 0,
        python=platform.python_version(),
    )


def format_table(figures: LoadFigures) -> str:
    rows = [
        ("records folder", figures.path),
        ("size on disk", f"{figures.size_mib} MiB"),
        ("case versions", str(figures.case_versions)),
        ("runs", str(figures.runs)),
        ("answers", str(figures.answers)),
        ("load time", f"{figures.wall_seconds} s with {figures.jobs} process(es)"),
        ("peak RSS", f"{figures.peak_rss_mib} MiB (before loading: {figures.baseline_rss_mib} MiB)"),
        ("worker peak RSS", f"{figures.worker_peak_rss_mib} MiB each at most" if figures.jobs > 1 else "no workers"),
        ("tracemalloc peak", "not traced" if figures.tracemalloc_peak_mib is None
         else f"{figures.tracemalloc_peak_mib} MiB"),
        ("machine", f"{figures.cpus} CPUs, Python {figures.python}"),
    ]
    width = max(len(name) for name, _ in rows)
    return "\n".join(f"{name.ljust(width)}  {value}" for name, value in rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="Time sitegen.load.records.load_records on a records folder.")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--jobs", type=int, default=1, metavar="N",
                        help="worker processes reading the answers files (default: 1, none)")
    parser.add_argument("--tracemalloc", action="store_true",
                        help="also trace Python allocations (slows loading down several times)")
    args = parser.parse_args(sys.argv[1:] if argv is None else argv)
    try:
        figures = measure_load(args.out_dir, jobs=args.jobs, trace=args.tracemalloc)
    except SitegenError as error:
        lines = error.lines()
        for line in lines[:50]:
            print(line, file=sys.stderr)
        if len(lines) > 50:
            print(f"... and {len(lines) - 50} more", file=sys.stderr)
        return error.exit_code
    print(format_table(figures))
    print(json.dumps(asdict(figures), sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
