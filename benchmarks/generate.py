"""Writes a large synthetic records folder, valid by construction, so the loader and scorer can be timed at scale.

Usage: python benchmarks/generate.py OUT_DIR [--case-versions N] [--repetitions R]
       [--runs K] [--findings F] [--seed S]

Same arguments give the same bytes: every random choice comes from a `random.Random`
seeded with a string built from the seed and the place it is used, never from the clock
or from dictionary or file-system order. Answers are written one run at a time, one
answer per line, so memory does not grow with the number of runs.
Cases come from synthetic_cases.py, answers from synthetic_engine.py (beside this script).
"""

from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, TextIO

from synthetic_cases import FIRST_RUN_DATE, case_json, draw_cases
from synthetic_engine import REVIEWERS, draw_answer, draw_profile

SUITE = "synthetic"
SUITE_VERSION = 1
SCORER = {"version": 6, "matching_method": "structured-identity/whitespace-collapsed/v6"}
REPORT = {"version": 5, "runner": 3, "run_record": 5}
ASSESSMENT = {"version": 1, "policy": "short-case-v1"}
SOURCE = "https://example.org/synthetic-quality"


@dataclass(frozen=True)
class Options:
    out_dir: Path
    case_versions: int = 1000
    repetitions: int = 3
    runs: int = 10
    findings: int = 6
    seed: int = 1


@dataclass(frozen=True)
class SetupSpec:
    id: str
    configuration: dict

    @property
    def fingerprint(self) -> str:
        return fingerprint_of(self.configuration)


def fingerprint_of(configuration: dict) -> str:
    """SHA-256 of the canonical configuration, exactly as docs/records.md defines it."""
    canonical = json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


# --- records -----------------------------------------------------------------


def draw_setups(options: Options) -> tuple[SetupSpec, ...]:
    def configuration(model: str, reviewer_prompt: str) -> dict:
        return {
            "engine": "synthetic-engine",
            "model": model,
            "prompts": {"reviewer": "sha256:" + hashlib.sha256(reviewer_prompt.encode()).hexdigest(),
                        "reducer": "sha256:" + hashlib.sha256(b"reducer prompt 1").hexdigest()},
            "parameters": {"temperature": 0, "max_output_tokens": 4000, "reviewers": len(REVIEWERS)},
            "note": "syntetisk körning för mätning av inläsning",
            "merge": True,
        }

    first = SetupSpec("synthetic-merge-v1", configuration("example-model-2025-11", "reviewer prompt 1"))
    if options.runs < 2:
        return (first,)
    return first, SetupSpec("synthetic-merge-v2", configuration("example-model-2026-01", "reviewer prompt 2"))


def run_ids(options: Options) -> list[str]:
    return [f"run-{i + 1:03d}" for i in range(options.runs)]


def runs_json(options: Options, setups: tuple[SetupSpec, ...]) -> dict:
    runs = []
    for i, run_id in enumerate(run_ids(options)):
        setup = setups[0] if i < (options.runs + 1) // 2 else setups[-1]
        runs.append({
            "id": run_id, "date": (FIRST_RUN_DATE + datetime.timedelta(days=7 * i)).isoformat(),
            "setup": setup.id, "suite": SUITE, "suite_version": SUITE_VERSION,
            "scorer": dict(SCORER), "report": dict(REPORT), "assessment": dict(ASSESSMENT),
            "engine_version": f"synthetic 2026.1.{i + 1}", "repetitions": options.repetitions,
            "published": True, "status": "completed",
        })
    return {"format": "sitegen.runs/1", "runs": runs}


def config_json(options: Options) -> dict:
    answers = [f"answers/{run_id}.json" for run_id in run_ids(options)]
    return {
        "format": "sitegen.config/1",
        "title": {"sv": "Motorns kvalitet (syntetisk)", "en": "Engine quality (synthetic)"},
        "base_url": "https://quality.example.org/",
        "languages": ["sv", "en"],
        "default_language": "sv",
        "source_repository": SOURCE,
        "answers": answers,
        "publish": [{"record": "results.json", "name": "synthetic-quality-results.json"},
                    {"record": "cases.json", "name": "synthetic-quality-cases.json"}]
        + [{"record": path, "name": "synthetic-quality-" + path.replace("/", "-")} for path in answers],
        "internal_fields": ["internal_rule_name", "cost", "cost_sek", "storage_location", "storage_uri"],
    }


def changelog_entries(options: Options, setups: tuple[SetupSpec, ...]) -> dict[str, str]:
    """One entry per version the runs use, dated before the first run that uses it."""
    before = (FIRST_RUN_DATE - datetime.timedelta(days=3)).isoformat()
    entries = {
        "scorer-6.md": ("measurement-method", "scorer:6",
                        "The scorer also accepts a quote wider than the passage when it stays on the same line."),
        "report-5.md": ("engine-change", "report:{version}/runner:{runner}/run-record:{run_record}".format(**REPORT),
                        "The report format records the trace of every merged finding."),
        "assessment-1.md": ("scoring-rules", "assessment:{version}/policy:{policy}".format(**ASSESSMENT),
                            "Short cases are assessed on their seven measures, each counted on its own."),
        "suite-synthetic-1.md": ("test-cases", None,
                                 f"The synthetic suite, version {SUITE_VERSION}, is generated for load tests."),
    }
    texts = {}
    for name, (category, explains, body) in entries.items():
        header = [f"date: {before}", f"category: {category}"]
        header += [f"explains: {explains}"] if explains else []
        header += [f"source: {SOURCE}/changes/{name[:-3]}", "---", body, ""]
        texts[f"{before}-{name}"] = "\n".join(header)
    if len(setups) > 1:
        second = FIRST_RUN_DATE + datetime.timedelta(days=7 * ((options.runs + 1) // 2))
        texts[f"{second.isoformat()}-setup-{setups[1].id}.md"] = "\n".join([
            f"date: {second.isoformat()}", "category: run-setup", f"source: {SOURCE}/changes/{setups[1].id}", "---",
            f"Runs from this date use the setup `{setups[1].id}` with a newer model and reviewer prompt.", ""])
    return texts


def dump(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2) + "\n"


def write_answers(stream: TextIO, answers: Iterator[dict]) -> None:
    """Streams one answer per line, so a run's answers are never all held in memory."""
    stream.write('{\n  "format": "sitegen.answers/1",\n  "answers": [')
    separator = "\n    "
    for answer in answers:
        stream.write(separator)
        stream.write(json.dumps(answer, ensure_ascii=False))
        separator = ",\n    "
    stream.write("\n  ]\n}\n")


def generate(options: Options) -> None:
    """Writes the whole records folder; refuses a folder that already holds files."""
    out = options.out_dir
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out} is not empty")
    (out / "answers").mkdir(parents=True, exist_ok=True)
    (out / "changelog").mkdir(exist_ok=True)
    cases, pairs = draw_cases(options.seed, options.case_versions)
    setups = draw_setups(options)
    files = {
        "sitegen.json": config_json(options),
        "setups.json": {"format": "sitegen.setups/1", "setups": [
            {"id": s.id, "configuration": s.configuration, "fingerprint": s.fingerprint} for s in setups]},
        "runs.json": runs_json(options, setups),
        "cases.json": {
            "format": "sitegen.cases/1",
            "suites": [{"id": SUITE, "version": SUITE_VERSION, "title": "Synthetic load suite",
                        "case_versions": [c.id for c in cases]}],
            "case_versions": [case_json(c) for c in cases],
            "pairs": [{"id": p.id, "kind": p.kind, "versions": list(p.versions), "detail": p.detail,
                       "rules_differ": p.rules_differ} for p in pairs],
        },
    }
    for name, value in files.items():
        (out / name).write_text(dump(value), encoding="utf-8")
    for name, text in changelog_entries(options, setups).items():
        (out / "changelog" / name).write_text(text, encoding="utf-8")
    for run_id in run_ids(options):
        profile = draw_profile(options.seed, run_id, findings=options.findings)
        answers = (draw_answer(options.seed, run_id, case=case, repetition=repetition, profile=profile)
                   for case in cases for repetition in range(1, options.repetitions + 1))
        with open(out / "answers" / f"{run_id}.json", "w", encoding="utf-8", newline="\n") as stream:
            write_answers(stream, answers)


def parse_options(argv: list[str]) -> Options:
    parser = argparse.ArgumentParser(description="Write a synthetic records folder for load tests.")
    parser.add_argument("out_dir", type=Path)
    parser.add_argument("--case-versions", type=int, default=1000)
    parser.add_argument("--repetitions", type=int, default=3)
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--findings", type=int, default=6)
    parser.add_argument("--seed", type=int, default=1)
    args = parser.parse_args(argv)
    for name in ("case_versions", "repetitions", "runs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.findings < 0:
        parser.error("--findings must not be negative")
    return Options(args.out_dir, args.case_versions, args.repetitions, args.runs, args.findings, args.seed)


def main(argv: list[str] | None = None) -> int:
    options = parse_options(sys.argv[1:] if argv is None else argv)
    try:
        generate(options)
    except FileExistsError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
