"""Writes every output sitegen gives for one records folder into OUT, so two versions of sitegen can be compared byte for byte.

A redesign that promises the same behaviour is checked by running this with the old and the new code and comparing
the two folders (`diff -r OLD NEW`, or the MANIFEST files alone):

    python scripts/snapshot_outputs.py records OUT [--invalid tests/data/invalid] [--jobs 1 2]

What is written, for RECORDS:
- site-jobsN/: `sitegen build --jobs N` for each N given;
- score/results.json and score/stdout: `sitegen score --all` on a copy of RECORDS without its results.json;
- compare/A__B.txt and .json: `sitegen compare` of each published run with the next (refusals included);
- explain/RUN__CASE.txt: `sitegen explain` of every case version of the first and last published run;
- invalid/NAME.txt: the diagnostics of `sitegen build` on --base (tests/data/records-small) overlaid with the files of
  each folder under --invalid, as the loader's tests do (with the exit code);
- MANIFEST: the SHA-256 of every file above, sorted by path.
Each command runs as a subprocess of the Python running this script, with a fixed SOURCE_DATE_EPOCH unset.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path


def sitegen(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k != "SOURCE_DATE_EPOCH"}
    return subprocess.run([sys.executable, "-m", "sitegen", *args], capture_output=True, text=True, env=env, cwd=cwd)


def record(path: Path, done: subprocess.CompletedProcess, places: dict[str, str]) -> None:
    """The command's exit code and output, with the folders it was given named by placeholders (snapshots compare)."""
    text = f"exit {done.returncode}\n--- stdout\n{done.stdout}--- stderr\n{done.stderr}"
    for folder, name in sorted(places.items(), key=lambda item: -len(item[0])):
        text = text.replace(folder, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


def published_runs(records: Path) -> list[dict]:
    runs = json.loads((records / "runs.json").read_text(encoding="utf-8"))["runs"]
    return sorted((r for r in runs if r.get("published")), key=lambda r: (r["date"], r["id"]))


def case_versions(records: Path, run: dict) -> list[str]:
    cases = json.loads((records / "cases.json").read_text(encoding="utf-8"))
    for suite in cases["suites"]:
        if suite["id"] == run["suite"] and suite["version"] == run["suite_version"]:
            return list(suite["case_versions"])
    return []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("records", type=Path)
    parser.add_argument("out", type=Path)
    parser.add_argument("--invalid", type=Path, default=None)
    parser.add_argument("--base", type=Path, default=Path("tests/data/records-small"))
    parser.add_argument("--jobs", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--explain-limit", type=int, default=40, help="case versions explained per run (at most)")
    args = parser.parse_args(argv)
    records, out = args.records.resolve(), args.out.resolve()
    if out.exists():
        parser.error(f"{out} exists: name a new folder")
    out.mkdir(parents=True)
    places = {str(records): "RECORDS", str(out): "OUT"}

    for jobs in args.jobs:
        record(out / f"build-jobs{jobs}.txt", sitegen("build", "--records", str(records), "--out", str(out / f"site-jobs{jobs}"),
                                                      "--jobs", str(jobs), "--quiet"), places)

    copy = out / "score-records"
    shutil.copytree(records, copy)
    (copy / "results.json").unlink(missing_ok=True)
    record(out / "score" / "stdout.txt", sitegen("score", "--all", "--records", str(copy)), places)
    if (copy / "results.json").exists():
        shutil.copyfile(copy / "results.json", out / "score" / "results.json")
    shutil.rmtree(copy)

    runs = published_runs(records)
    for a, b in zip(runs, runs[1:]):
        name = f"{a['id']}__{b['id']}"
        record(out / "compare" / f"{name}.txt", sitegen("compare", a["id"], b["id"], "--records", str(records)), places)
        record(out / "compare" / f"{name}.json.txt", sitegen("compare", a["id"], b["id"], "--format", "json", "--records", str(records)), places)
    for run in {r["id"]: r for r in (runs[:1] + runs[-1:])}.values():
        for cv in case_versions(records, run)[: args.explain_limit]:
            record(out / "explain" / f"{run['id']}__{cv}.txt", sitegen("explain", run["id"], cv, "--records", str(records)), places)

    if args.invalid is not None:
        for fixture in sorted(p for p in args.invalid.iterdir() if p.is_dir()):
            overlaid = out / "invalid-records"
            shutil.copytree(args.base, overlaid)
            for file in fixture.glob("*.json"):
                shutil.copyfile(file, overlaid / file.name)
            record(out / "invalid" / f"{fixture.name}.txt",
                   sitegen("build", "--records", str(overlaid), "--out", str(out / "invalid-site"), "--quiet"), places)
            shutil.rmtree(overlaid)
            shutil.rmtree(out / "invalid-site", ignore_errors=True)

    lines = []
    for path in sorted(p for p in out.rglob("*") if p.is_file()):
        lines.append(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {path.relative_to(out).as_posix()}")
    (out / "MANIFEST").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
