"""Times a whole `sitegen build` against a floor: bare Jinja2 rendering and writing as many pages of the same size.

    python benchmarks/bench_build.py RECORDS_DIR [--jobs 2] [--out DIR]

RECORDS_DIR must hold scored results (`sitegen score --all --records RECORDS_DIR`). The build is timed end to
end (load, validation, verification by re-scoring, changelog, comparisons, rendering both languages, writing,
hashing, swapping). The floor renders one small template per page with the same number of processes, each page
padded to the build's average page size, and writes it to a fresh folder sharded the same way; absolute times
vary between machines, the ratio build/floor much less.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jinja2 import Environment  # noqa: E402

from sitegen.build import build_site  # noqa: E402

FLOOR_TEMPLATE = """<!doctype html>
<html lang="{{ lang }}"><head><meta charset="utf-8"><title>{{ title }}</title></head>
<body><main><h1>{{ title }}</h1>{% for row in rows %}<p>{{ row }}</p>{% endfor %}</main></body></html>
"""


def peak_rss_mib() -> tuple[float, float]:
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return own, children


def site_pages(folder: Path) -> tuple[int, int]:
    count = size = 0
    for path in folder.rglob("*.html"):
        count += 1
        size += path.stat().st_size
    return count, size


def _floor_chunk(args: tuple[str, int, int, int]) -> int:
    out, start, stop, page_size = args
    env = Environment(autoescape=True)
    template = env.from_string(FLOOR_TEMPLATE)
    row = "Motorn rapporterade ett fynd <på> textstället & citerade det ordagrant. "
    rows = [row] * max(1, page_size // (len(row) + 8))
    written = 0
    for index in range(start, stop):
        html = template.render(lang="sv", title=f"Page {index}", rows=rows)
        target = Path(out) / f"{index % 997:03d}" / f"page-{index}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(html.encode("utf-8"))
        written += 1
    return written


def measure_floor(pages: int, page_size: int, jobs: int) -> float:
    with tempfile.TemporaryDirectory(prefix="sitegen-floor-") as tmp:
        step = max(1, pages // (jobs * 8))
        chunks = [(tmp, i, min(i + step, pages), page_size) for i in range(0, pages, step)]
        started = time.perf_counter()
        if jobs == 1:
            for chunk in chunks:
                _floor_chunk(chunk)
        else:
            with multiprocessing.get_context("fork").Pool(jobs) as pool:
                pool.map(_floor_chunk, chunks)
        return time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="where to build (default: a temporary folder, removed after)")
    args = parser.parse_args(argv)
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1790000000")

    out = args.out or Path(tempfile.mkdtemp(prefix="sitegen-bench-")) / "site"
    phases: list[tuple[str, float]] = []
    started = time.perf_counter()

    def progress(phase: str, detail: str = "") -> None:
        phases.append((phase, round(time.perf_counter() - started, 1)))

    summary = build_site(args.records, out, jobs=args.jobs, progress=progress)
    seconds = time.perf_counter() - started
    own_rss, child_rss = peak_rss_mib()
    pages, total = site_pages(out)
    average = total // max(pages, 1)
    floor = measure_floor(pages, average, args.jobs)
    if args.out is None:
        shutil.rmtree(out.parent, ignore_errors=True)
    report = {
        "records": str(args.records), "jobs": args.jobs, "pages": pages, "average_page_bytes": average,
        "build_seconds": round(seconds, 1), "pages_per_second": round(pages / seconds),
        "floor_seconds": round(floor, 1), "floor_pages_per_second": round(pages / floor),
        "ratio_build_to_floor": round(seconds / floor, 2),
        "peak_rss_mib": round(own_rss), "peak_rss_mib_worker": round(child_rss),
        "phases_started_at_seconds": phases, "summary_pages": summary.pages,
    }
    print(f"{pages} pages (average {average} bytes) with --jobs {args.jobs}")
    print(f"build  {seconds:8.1f} s  {pages / seconds:8.0f} pages/s  peak RSS {own_rss:.0f} MiB (worker {child_rss:.0f} MiB)")
    print(f"floor  {floor:8.1f} s  {pages / floor:8.0f} pages/s  (bare Jinja2 render + write, same processes)")
    print(f"ratio  {seconds / floor:8.2f}")
    print("phases (seconds since start): " + ", ".join(f"{name} {at}" for name, at in phases))
    print(json.dumps(report, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main())
