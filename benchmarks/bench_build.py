"""Times a whole `sitegen build` against a floor (bare Jinja2) or Hugo, and incremental rebuilds with a cache.

    python benchmarks/bench_build.py RECORDS_DIR [--jobs 2] [--out DIR]
    python benchmarks/bench_build.py RECORDS_DIR --hugo [--rounds 3]       # apt-get install -y hugo (Debian's package)
    python benchmarks/bench_build.py RECORDS_DIR --incremental [--rounds 3]

RECORDS_DIR must hold scored results (`sitegen score --all --records RECORDS_DIR`). The build is timed end to
end (load, validation, verification by re-scoring, changelog, comparisons, rendering both languages, writing,
hashing, swapping). The floor renders one small template per page with the same number of processes, each page
padded to the build's average page size, and writes it to a fresh folder sharded the same way; absolute times
vary between machines, the ratio build/floor much less.

With --hugo, a Hugo site of as many pages of the build's average HTML size (plain HTML content files, one layout that
prints the content, in 997 sections like the floor; no lists, feeds or taxonomies) is generated once, and `hugo` and
sitegen's full build (each into a fresh folder) alternate for --rounds rounds: the min and the median of each, their
ratios, and the load average before and after. With --incremental, rounds of: a full build with an empty cache, a
rebuild with nothing changed, and a build after the newest run is added to records that lacked it (a copy of
RECORDS_DIR without it, scored once beforehand); each against the same full build; the last alternates with rendering
only the pages that changed (time_changed_only: with every run's own pages, and strictly, with only the added run's,
whose bytes are the only run pages that change), and the ratio of the two is target 3's.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from jinja2 import Environment  # noqa: E402

import sitegen.render.pages as pages_module  # noqa: E402
from sitegen.build import build_site, check_records, render_site  # noqa: E402
from sitegen.core.memory import give_back_large_buffers  # noqa: E402
from sitegen.publish.site import PageWriter  # noqa: E402

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


def spread(values: list[float]) -> dict:
    return {"rounds": [round(v, 2) for v in values], "min": round(min(values), 2), "median": round(statistics.median(values), 2)}


def hugo_site(folder: Path, pages: int, page_size: int) -> Path:
    """A Hugo project of `pages` single pages whose HTML content is about `page_size` bytes each once laid out."""
    (folder / "layouts" / "_default").mkdir(parents=True)
    (folder / "hugo.toml").write_text(
        'baseURL = "https://quality.example.org/"\nlanguageCode = "sv"\ntitle = "Bench"\n'
        'disableKinds = ["home", "section", "taxonomy", "term", "RSS", "sitemap", "robotsTXT", "404"]\n', encoding="utf-8")
    (folder / "layouts" / "_default" / "single.html").write_text(
        '<!doctype html>\n<html lang="sv"><head><meta charset="utf-8"><title>{{ .Title }}</title></head>\n'
        "<body><main><h1>{{ .Title }}</h1>{{ .Content }}</main></body></html>\n", encoding="utf-8")
    row = "<p>Motorn rapporterade ett fynd &lt;på&gt; textstället &amp; citerade det ordagrant.</p>\n"
    body = row * max(1, (page_size - 150) // len(row))
    for index in range(pages):
        target = folder / "content" / f"s{index % 997:03d}" / f"page-{index}.html"
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(f"---\ntitle: Page {index}\n---\n{body}", encoding="utf-8")
    return folder


def time_hugo(site: Path, out: Path) -> float:
    started = time.perf_counter()
    subprocess.run(["hugo", "--quiet", "--source", str(site), "--destination", str(out)], check=True,
                   stdout=subprocess.DEVNULL)
    return time.perf_counter() - started


def time_build(records: Path, out: Path, jobs: int, cache: Path | None = None) -> float:
    started = time.perf_counter()
    build_site(records, out, jobs=jobs, cache=cache)
    return time.perf_counter() - started


def compare_hugo(args) -> dict:
    """sitegen's full build and Hugo on pages of the same count and size, alternating, in fresh folders each round."""
    if shutil.which("hugo") is None:
        raise SystemExit("hugo is not installed: apt-get install -y hugo")
    work = Path(tempfile.mkdtemp(prefix="sitegen-hugo-"))
    load_before = os.getloadavg()
    probe = work / "probe"
    time_build(args.records, probe, args.jobs)
    pages, total = site_pages(probe)
    average = total // max(pages, 1)
    shutil.rmtree(probe)
    site = hugo_site(work / "hugo", pages, average)
    sides: dict[str, list[float]] = {"sitegen": [], "hugo": []}
    for round_ in range(args.rounds):
        order = ("sitegen", "hugo") if round_ % 2 == 0 else ("hugo", "sitegen")
        for side in order:
            out = work / f"{side}-{round_}"
            sides[side].append(time_build(args.records, out, args.jobs) if side == "sitegen" else time_hugo(site, out))
            shutil.rmtree(out)
    shutil.rmtree(work, ignore_errors=True)
    report = {"pages": pages, "average_page_bytes": average, "jobs": args.jobs, "sitegen": spread(sides["sitegen"]),
              "hugo": spread(sides["hugo"]), "ratio_median": round(statistics.median(sides["sitegen"]) / statistics.median(sides["hugo"]), 2),
              "ratio_min": round(min(sides["sitegen"]) / min(sides["hugo"]), 2),
              "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()]}
    print(f"{pages} pages (average {average} bytes), sitegen --jobs {args.jobs}, {args.rounds} alternating rounds")
    for side in ("sitegen", "hugo"):
        print(f"{side:8} min {report[side]['min']:7.2f} s  median {report[side]['median']:7.2f} s  rounds {report[side]['rounds']}")
    print(f"ratio sitegen/hugo: median {report['ratio_median']}, min {report['ratio_min']}; "
          f"load average {report['load_before']} -> {report['load_after']}")
    return report


def without_newest_run(records: Path, folder: Path) -> tuple[Path, str]:
    """A copy of the records without their newest published run (answers, publication and results), scored afresh."""
    shutil.copytree(records, folder)
    runs = json.loads((folder / "runs.json").read_text(encoding="utf-8"))
    newest = max((r for r in runs["runs"] if r.get("published")), key=lambda r: (r["date"], r["id"]))
    runs["runs"] = [r for r in runs["runs"] if r["id"] != newest["id"]]
    (folder / "runs.json").write_text(json.dumps(runs, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    config = json.loads((folder / "sitegen.json").read_text(encoding="utf-8"))
    own = [name for name in config["answers"] if newest["id"] in Path(name).stem]
    if len(own) != 1:
        raise SystemExit(f"the newest run {newest['id']} has no answers file of its own: cannot take it out")
    config["answers"].remove(own[0])
    config["publish"] = [p for p in config["publish"] if p["record"] != own[0]]
    (folder / "sitegen.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / own[0]).unlink()
    (folder / "results.json").unlink()
    subprocess.run([sys.executable, "-m", "sitegen", "score", "--all", "--records", str(folder), "--jobs", str(2)],
                   check=True, stdout=subprocess.DEVNULL)
    return folder, newest["id"]


def time_changed_only(records: Path, added: str, folder: Path, jobs: int, *, strict: bool = False) -> tuple[float, int]:
    """The time to render only the pages that changed when `added` was added, and their number.

    Those are every case page (its grid gains a row), the added run's case-run pages, the shared pages (overview, method,
    changelog, downloads, sitemap) and the runs' own pages and list pages: every run's (the first definition, from before
    run pages were cached), or with `strict` the added run's alone (the other runs' own pages keep their bytes). They are
    rendered from records already loaded, checked and verified (not timed), by the build's own renderer in the same
    number of processes, and written into a fresh folder; no other page is keyed, read or written.
    """
    checked = check_records(records, jobs=jobs)
    every = pages_module.page_tasks

    def changed_tasks(case_ids, published, runs_by_case, detail=lambda cv, run: True):
        # planned as the build plans its own tasks, from the pages wanted (not a full plan thinned out, which would leave
        # long tasks without the short ones the building process takes between them): the case pages, the added run's
        # case-run pages, and the runs' own pages (strictly, the added run's alone)
        return every(case_ids, [run for run in published if run.id == added or not strict], runs_by_case,
                     lambda cv, run: run == added and detail(cv, run))

    folder.mkdir(parents=True)
    pages_module.page_tasks = changed_tasks
    try:
        started = time.perf_counter()
        pages, _, _ = render_site(checked, jobs=jobs, write=PageWriter(folder))
        count = sum(1 for _ in pages)
        seconds = time.perf_counter() - started
    finally:
        pages_module.page_tasks = every
    shutil.rmtree(folder)
    return seconds, count


def compare_incremental(args) -> dict:
    """Full build with an empty cache, no-change rebuild, and one run added (alternating with rendering only the pages
    that changed: time_changed_only), for --rounds rounds."""
    work = Path(tempfile.mkdtemp(prefix="sitegen-incremental-"))
    load_before = os.getloadavg()
    fewer, added = without_newest_run(args.records, work / "fewer")
    figures: dict[str, list[float]] = {"full": [], "no_change": [], "one_run_added": [], "changed_only": [], "changed_strict": []}
    changed_pages = strict_pages = 0
    for round_ in range(args.rounds):
        records, cache, out = work / f"records-{round_}", work / f"cache-{round_}", work / f"site-{round_}"
        shutil.copytree(fewer, records)
        figures["full"].append(time_build(records, out, args.jobs, cache))
        figures["no_change"].append(time_build(records, out, args.jobs, cache))
        for name in ("runs.json", "sitegen.json", "results.json"):
            shutil.copy2(args.records / name, records / name)
        config = json.loads((args.records / "sitegen.json").read_text(encoding="utf-8"))
        for name in config["answers"]:
            if not (records / name).exists():
                shutil.copy2(args.records / name, records / name)
        sides = ("one_run_added", "changed_only", "changed_strict")
        for side in (sides if round_ % 2 == 0 else sides[::-1]):
            if side == "one_run_added":
                figures[side].append(time_build(records, out, args.jobs, cache))
            elif side == "changed_only":
                seconds, changed_pages = time_changed_only(records, added, work / f"changed-{round_}", args.jobs)
                figures[side].append(seconds)
            else:
                seconds, strict_pages = time_changed_only(records, added, work / f"strict-{round_}", args.jobs, strict=True)
                figures[side].append(seconds)
        pages, total = site_pages(out)
        for folder in (records, cache, out):
            shutil.rmtree(folder)
    shutil.rmtree(work, ignore_errors=True)
    full = statistics.median(figures["full"])
    report = {name: spread(values) for name, values in figures.items()}
    report.update({"added_run": added, "pages_after": pages, "jobs": args.jobs, "changed_pages": changed_pages,
                   "one_run_added_to_changed_only_median": round(statistics.median(figures["one_run_added"])
                                                                 / statistics.median(figures["changed_only"]), 2),
                   "one_run_added_to_changed_only_min": round(min(figures["one_run_added"]) / min(figures["changed_only"]), 2),
                   "strict_pages": strict_pages,
                   "one_run_added_to_changed_strict_median": round(statistics.median(figures["one_run_added"])
                                                                   / statistics.median(figures["changed_strict"]), 2),
                   "one_run_added_to_changed_strict_min": round(min(figures["one_run_added"]) / min(figures["changed_strict"]), 2),
                   "no_change_to_full_median": round(statistics.median(figures["no_change"]) / full, 3),
                   "one_run_added_to_full_median": round(statistics.median(figures["one_run_added"]) / full, 3),
                   "load_before": [round(x, 2) for x in load_before], "load_after": [round(x, 2) for x in os.getloadavg()]})
    print(f"incremental builds with a cache, --jobs {args.jobs}, {args.rounds} rounds; added run {added}; {pages} pages after")
    for name in figures:
        print(f"{name:14} min {report[name]['min']:7.2f} s  median {report[name]['median']:7.2f} s  rounds {report[name]['rounds']}")
    print(f"one run added / rendering only the {changed_pages} changed pages: median "
          f"{report['one_run_added_to_changed_only_median']}, min {report['one_run_added_to_changed_only_min']}")
    print(f"one run added / rendering only the {strict_pages} pages whose bytes change (the added run's own pages, not "
          f"the others'): median {report['one_run_added_to_changed_strict_median']}, min {report['one_run_added_to_changed_strict_min']}")
    print(f"no change / full {report['no_change_to_full_median']}, one run added / full {report['one_run_added_to_full_median']}; "
          f"load average {report['load_before']} -> {report['load_after']}")
    return report


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path, default=None, help="where to build (default: a temporary folder, removed after)")
    parser.add_argument("--hugo", action="store_true", help="compare the full build with Hugo on pages of the same count and size")
    parser.add_argument("--incremental", action="store_true", help="time full, no-change and one-run-added builds with a cache")
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args(argv)
    give_back_large_buffers()  # builds run in this process: with the memory policy `sitegen` itself sets (cli.main_entry)
    os.environ.setdefault("SOURCE_DATE_EPOCH", "1790000000")
    if args.hugo or args.incremental:
        report = {}
        if args.hugo:
            report["hugo"] = compare_hugo(args)
        if args.incremental:
            report["incremental"] = compare_incremental(args)
        print(json.dumps(report, sort_keys=True))
        return 0

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
