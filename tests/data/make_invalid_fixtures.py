"""Writes tests/data/invalid/<name>/: records-small with one file broken in one way, and the diagnostics it must give.

Run from the repository root after changing records-small: `python tests/data/make_invalid_fixtures.py`.
The expected.txt files are then reviewed by reading their diff: each must name the file, the place and the problem.
"""

import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).parent
SRC = HERE / "records-small"
OUT = HERE / "invalid"


def variant(name, file, old, new, *more):
    """`file` with `old` replaced by `new` (and each further old, new pair of `more`), once each."""
    text = (SRC / file).read_text(encoding="utf-8")
    pairs = [(old, new), *zip(more[::2], more[1::2])]
    for before, after in pairs:
        if before not in text:
            raise SystemExit(f"{name}: {before!r} not found in {file}")
        text = text.replace(before, after, 1)
    (OUT / name).mkdir(parents=True, exist_ok=True)
    (OUT / name / file).write_text(text, encoding="utf-8")


def write(name, file, value):
    (OUT / name).mkdir(parents=True, exist_ok=True)
    (OUT / name / file).write_text(json.dumps(value, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def load(file):
    return json.loads((SRC / file).read_text(encoding="utf-8"))


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    variant("json-syntax", "cases.json", '"pairs": []', '"pairs": [,]')
    variant("json-duplicate-key", "runs.json", '"engine_version": "granska 1.0",', '"engine_version": "granska 1.0", "engine_version": "x",')
    variant("json-nan", "runs.json", '"cost_sek": 12.5', '"cost_sek": NaN')
    variant("unknown-field", "cases.json", '"reviewer_expected": true', '"reviewer_expectd": true')
    variant("missing-field", "runs.json", '      "engine_version": "granska 1.0",\n', '')
    variant("wrong-type", "runs.json", '"repetitions": 2,', '"repetitions": "2",')
    # a day that does not exist, in the same file as a type error: both are reported at once
    variant("bad-date", "runs.json", '"date": "2026-02-10",', '"date": "2026-02-30",', '"repetitions": 2,', '"repetitions": "2",')
    variant("duplicate-case-id", "cases.json", '"id": "papers-absent",', '"id": "tap-clean",')
    variant("dangling-rule", "cases.json", '"rules": [\n              "R-FORVARING-1"', '"rules": [\n              "R-FORVARING"')
    variant("passage-not-found", "cases.json", '"quote": "Läckan är åtgärdad."', '"quote": "Läckan är helt åtgärdad."')
    variant("line-span", "cases.json", '"lines": [\n                1,\n                1\n', '"lines": [\n                1,\n                9\n')
    variant("dangling-trace", "answers.json", '"trace": [\n              "a1",\n              "b1"', '"trace": [\n              "a1",\n              "c1"')
    variant("unknown-setup", "runs.json", '"setup": "duo"', '"setup": "dou"')
    variant("unknown-case-version", "answers.json", '"case_version": "tap-clean"', '"case_version": "tap-cleen"')
    variant("fingerprint", "setups.json", '"temperature": 0,', '"temperature": 0.2,')
    variant("unsafe-id", "runs.json", '"id": "r2"', '"id": "../r2"')
    variant("scorer-version", "runs.json", '"version": 5,\n        "matching_method": "structured-identity/whitespace-collapsed/v5"',
            '"version": 4,\n        "matching_method": "structured-identity/whitespace-collapsed/v4"')
    variant("report-unexpected", "answers.json", '"report": null', '"report": {"findings": []}')
    answers = load("answers.json")
    answers["answers"] = [a for a in answers["answers"]
                          if not (a["run"] == "r2" and a["case_version"] == "papers-absent" and a["repetition"] == 2)]
    write("answer-missing", "answers.json", answers)
    hidden, answers = load("answers-hidden.json"), load("answers.json")
    answers["answers"].append(hidden["answers"].pop(0))
    write("unpublished-leak", "answers.json", answers)
    write("unpublished-leak", "answers-hidden.json", hidden)
    cases = load("cases.json")
    cases["case_versions"][0]["key"]["prohibited"][0].update(kind="flaw", missing=True)
    write("prohibited-is-expected", "cases.json", cases)
    cases = load("cases.json")
    cases["case_versions"][0]["internal_rule_name"] = "tillsyn.lackage.v2"
    write("internal-field", "cases.json", cases)
    # the same span written two ways: the expected finding quotes all of line 3, the prohibited one gives its lines
    cases = load("cases.json")
    key = cases["case_versions"][0]["key"]
    key["expected"][0]["passage"] = {"quote": "Läckan är åtgärdad. Åtgärden utfördes samma dag."}
    key["prohibited"][0].update(kind="flaw", missing=True, passage={"lines": [3, 3]})
    write("prohibited-is-expected-span", "cases.json", cases)
    cases = load("cases.json")
    cases["case_versions"][0]["key"]["expected"][0]["passage"] = {"quote": "Läckan är åtgärdad.", "lines": [2, 3]}
    write("passage-lines-wider", "cases.json", cases)
    variant("crashed-findings", "answers.json", '"rerun": {\n        "status": "completed",', '"rerun": {\n        "status": "crashed",')
    for folder in sorted(OUT.iterdir()):
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp) / "records"
            shutil.copytree(SRC, root)
            for f in folder.glob("*.json"):
                shutil.copy(f, root / f.name)
            done = subprocess.run([sys.executable, "-m", "sitegen", "check", "--records", str(root)], capture_output=True, text=True)
            lines = [line for line in done.stdout.splitlines() + done.stderr.splitlines() if ": error: " in line]
            (folder / "expected.txt").write_text("".join(line.strip().replace(f"{root}/", "records/") + "\n" for line in lines), encoding="utf-8")


if __name__ == "__main__":
    main()
