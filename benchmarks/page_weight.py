"""Weighs a built site: the bytes of its case-run pages (average and distribution) and of the whole site, and its files.

Usage: python benchmarks/page_weight.py SITE [SITE...]

A case-run page is a file `<lang>/cases/<shard>/<case version>/<run>.html` (any name but index.html). Prints one block
per site (with every kind of file: case-run, case, run, run list pages, downloads, ...) and then one JSON line per site (for collecting figures); nothing is timed, so a busy machine does not matter.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
from pathlib import Path


def page_kind(parts: tuple[str, ...], name: str) -> str:
    """Which kind of file a site path is: case-run, case, run, run-grid, run-observations, run-list, downloads, static or other."""
    if parts[:1] == ("downloads",):
        return "downloads"
    if parts[:1] == ("static",):
        return "static"
    if len(parts) == 4 and parts[1] == "cases" and name.endswith(".html"):
        return "case" if name == "index.html" else "case-run"
    if len(parts) == 2 and parts[1] == "runs" and name.endswith(".html"):
        return "run"
    if len(parts) == 3 and parts[1] == "runs":
        return "run-grid" if name.startswith("grid-") else "run-observations" if name.startswith("observations-") else "run-list"
    return "other"


def weigh(site: Path) -> dict[str, object]:
    """The figures of one site folder."""
    case_runs: list[int] = []
    kinds: dict[str, list[int]] = {}
    total = files = downloads = 0
    for folder, _, names in os.walk(site):
        here = Path(folder)
        parts = here.relative_to(site).parts
        for name in names:
            size = (here / name).stat().st_size
            total += size
            files += 1
            kind = kinds.setdefault(page_kind(parts, name), [0, 0])
            kind[0] += 1
            kind[1] += size
            if parts[:1] == ("downloads",):
                downloads += size
            elif len(parts) == 4 and parts[1] == "cases" and name.endswith(".html") and name != "index.html":
                case_runs.append(size)
    case_runs.sort()

    def at(fraction: float) -> int:
        return case_runs[min(len(case_runs) - 1, int(fraction * len(case_runs)))] if case_runs else 0

    return {
        "site": str(site),
        "case_run_pages": len(case_runs),
        "case_run_mean_bytes": round(statistics.fmean(case_runs)) if case_runs else 0,
        "case_run_min": at(0.0), "case_run_p10": at(0.1), "case_run_median": at(0.5), "case_run_p90": at(0.9),
        "case_run_max": case_runs[-1] if case_runs else 0,
        "case_run_total_bytes": sum(case_runs),
        "site_bytes": total,
        "site_files": files,
        "downloads_bytes": downloads,
        "kinds": {kind: {"files": n, "bytes": b, "mean_bytes": round(b / n)} for kind, (n, b) in sorted(kinds.items())},
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sites", type=Path, nargs="+")
    args = parser.parse_args()
    found = [weigh(site) for site in args.sites]
    for f in found:
        print(f"{f['site']}: {f['case_run_pages']:,} case-run pages, mean {f['case_run_mean_bytes']:,} bytes "
              f"(min {f['case_run_min']:,}, p10 {f['case_run_p10']:,}, median {f['case_run_median']:,}, "
              f"p90 {f['case_run_p90']:,}, max {f['case_run_max']:,}); site {f['site_bytes'] / 2**20:,.0f} MiB in "
              f"{f['site_files']:,} files, of which downloads {f['downloads_bytes'] / 2**20:,.0f} MiB")
        for kind, k in f["kinds"].items():
            print(f"  {kind:17} {k['files']:>8,} files {k['bytes'] / 2**20:>10,.1f} MiB  mean {k['mean_bytes']:>9,} bytes")
    for f in found:
        print(json.dumps(f, sort_keys=True))


if __name__ == "__main__":
    main()
