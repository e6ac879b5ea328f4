"""Sealed inputs: a results entry records the SHA-256 of what its run was scored from, and a later edit is refused where it is."""

import hashlib
import json
import shutil
from collections import Counter
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from sitegen.cli import main
from sitegen.core import model as m
from sitegen.load.records import load_records
from sitegen.load.spool import AnswerSpool
from sitegen.score.results import canonical_json, read_results
from sitegen.score.seals import answer_digest, answer_form, check_seals, digest

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "records"


def _copy(tmp_path: Path) -> Path:
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    return root


def _edit(root: Path, name: str, change) -> str:
    """Change one records file as a maintainer's editor would (re-indented), and return its new text."""
    path = root / name
    value = json.loads(path.read_text(encoding="utf-8"))
    change(value)
    text = json.dumps(value, ensure_ascii=False, indent=2) + "\n"
    path.write_text(text, encoding="utf-8")
    return text


def _place(text: str, offset: int) -> str:
    return f"{text.count(chr(10), 0, offset) + 1}:{offset - (text.rfind(chr(10), 0, offset) + 1) + 1}"


def _unique(text: str, needle: str) -> int:
    assert text.count(needle) == 1, needle
    return text.index(needle)


def _nth_item(text: str, n: int, indent: str = "    ") -> int:
    """Offset of the n-th object of a top-level list as json.dumps(indent=2) writes it."""
    offsets = [i + 1 + len(indent) for i in range(len(text)) if text.startswith("\n" + indent + "{", i)]
    return offsets[n]


def _refused(tmp_path: Path, root: Path, capsys) -> tuple[str, str]:
    """Build and check the records: both must refuse; return what each said."""
    out = tmp_path / "site"
    code = main(["build", "--records", str(root), "--out", str(out), "--quiet"])
    built = capsys.readouterr()
    assert code == 2, built.err
    assert not out.exists(), "nothing half-written"
    assert "Traceback" not in built.err
    code = main(["check", "--records", str(root)])
    checked = capsys.readouterr()
    assert code == 1
    return built.err, checked.out


def _sealed_runs(records_root: Path, predicate) -> list[str]:
    results = json.loads((records_root / "results.json").read_text(encoding="utf-8"))
    return [r["run"] for r in results["runs"] if predicate(r)]


def test_a_document_changed_outside_any_quote_is_refused_at_its_place(tmp_path, capsys):
    root = _copy(tmp_path)
    cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    index, cv = next((i, cv) for i, cv in enumerate(cases["case_versions"]) if cv["document"].count("\n") >= 3)
    used = set()
    for finding in cv["key"]["expected"] + cv["key"]["prohibited"] + cv["key"]["voluntary"]:
        if finding.get("passage") and finding["passage"].get("lines"):
            used.update(range(finding["passage"]["lines"][0], finding["passage"]["lines"][1] + 1))
    lines = cv["document"].split("\n")
    free = next(n for n in range(1, len(lines) + 1) if n not in used and lines[n - 1].strip())
    quotes = [f["passage"]["quote"] for f in cv["key"]["expected"] + cv["key"]["prohibited"]
              if f.get("passage") and f["passage"].get("quote")]
    lines[free - 1] += " Tillagt i efterhand."
    document = "\n".join(lines)
    assert all(q in document for q in quotes), "every quote still stands in the document"
    text = _edit(root, "cases.json", lambda v: v["case_versions"][index].__setitem__("document", document))
    place = _place(text, _unique(text, json.dumps(document, ensure_ascii=False)))
    built, checked = _refused(tmp_path, root, capsys)
    sealing = _sealed_runs(root, lambda r: cv["id"] in r.get("seal", {}).get("case_versions", {}))
    assert sealing, "bundled runs are sealed"
    line = next(x for x in built.splitlines() if "[seal.changed]" in x)
    assert line.startswith(f"{root / 'cases.json'}:{place}: /case_versions/{index}/document: error: "
                           f'case version "{cv["id"]}" changed its document after ')
    assert all(f'"{run}"' in line for run in sealing)
    assert line.strip() in checked


def test_a_findings_wording_changed_is_refused_at_its_answer(tmp_path, capsys):
    root = _copy(tmp_path)
    answers = json.loads((root / "answers.json").read_text(encoding="utf-8"))
    index, answer = next((i, a) for i, a in enumerate(answers["answers"])
                         if a["reviewers"] and a["reviewers"][0]["findings"])

    def reword(value):
        finding = value["answers"][index]["reviewers"][0]["findings"][0]
        finding["wording"] = finding["wording"] + " (omformulerat)"

    text = _edit(root, "answers.json", reword)
    place = _place(text, _nth_item(text, index))
    built, checked = _refused(tmp_path, root, capsys)
    expected = (f"{root / 'answers.json'}:{place}: /answers/{index}: error: answer of run \"{answer['run']}\" to case version "
                f"\"{answer['case_version']}\" repetition {answer['repetition']} changed after the run was sealed")
    assert any(x.startswith(expected) and x.endswith("[seal.changed]") for x in built.splitlines()), built
    assert expected in checked


@pytest.mark.parametrize("field, value", [("date", "2026-09-03"), ("engine_version", "granska 2026.09.9-omdopad")])
def test_a_runs_date_or_engine_version_changed_is_refused_at_its_field(tmp_path, capsys, field, value):
    root = _copy(tmp_path)
    runs = json.loads((root / "runs.json").read_text(encoding="utf-8"))
    index, run = next((i, r) for i, r in enumerate(runs["runs"]) if r["published"] and r["status"] == "completed")
    text = _edit(root, "runs.json", lambda v: v["runs"][index].__setitem__(field, value))
    place = _place(text, _unique(text, json.dumps(value)))
    built, checked = _refused(tmp_path, root, capsys)
    expected = (f"{root / 'runs.json'}:{place}: /runs/{index}/{field}: error: run \"{run['id']}\" changed its {field} "
                "after it was sealed")
    assert any(x.startswith(expected) and x.endswith("[seal.changed]") for x in built.splitlines()), built
    assert expected in checked


def test_a_setups_configuration_changed_with_its_fingerprint_recomputed_is_refused(tmp_path, capsys):
    root = _copy(tmp_path)
    setups = json.loads((root / "setups.json").read_text(encoding="utf-8"))
    setup = setups["setups"][0]
    old = setup["fingerprint"]
    configuration = dict(setup["configuration"], model="another-model-2026-06")
    new = hashlib.sha256(json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
                         .encode("utf-8")).hexdigest()

    def change(value):
        value["setups"][0]["configuration"] = configuration
        value["setups"][0]["fingerprint"] = new

    text = _edit(root, "setups.json", change)
    place = _place(text, text.index('"configuration": ') + len('"configuration": '))
    built, checked = _refused(tmp_path, root, capsys)
    line = next(x for x in built.splitlines() if "[seal.changed]" in x)
    assert line.startswith(f"{root / 'setups.json'}:{place}: /setups/0/configuration: error: run setup \"{setup['id']}\" "
                           "changed its configuration after ")
    assert f"sealed fingerprint {old}, now {new}" in line
    assert "[record.fingerprint" not in built, "the fingerprint itself agrees with the configuration"
    assert line.strip() in checked


def _unsealed(root: Path) -> bytes:
    """The results record as an older sitegen wrote it: the same entries without their seals, and no publication log."""
    (root / "publications.jsonl").unlink(missing_ok=True)
    value = json.loads((root / "results.json").read_text(encoding="utf-8"))
    for run in value["runs"]:
        run.pop("seal", None)
    data = canonical_json(value)
    (root / "results.json").write_bytes(data)
    return data


def test_entries_without_a_seal_are_verified_as_before_and_shown_not_sealed(tmp_path, capsys):
    root = _copy(tmp_path)
    before = _unsealed(root)
    run_id = _sealed_runs(RECORDS, lambda r: r["outcome"] != "CRASHED")[0]
    _edit(root, "runs.json", lambda v: next(r for r in v["runs"] if r["id"] == run_id).__setitem__("engine_version", "x 1"))
    out = tmp_path / "site"
    assert main(["build", "--records", str(root), "--out", str(out), "--quiet"]) == 0, capsys.readouterr().err
    assert (root / "results.json").read_bytes() == before, "never rewritten silently"
    sv = (out / "sv" / "runs" / f"{run_id}.html").read_text(encoding="utf-8")
    en = (out / "en" / "runs" / f"{run_id}.html").read_text(encoding="utf-8")
    assert "inte förseglad:" in sv and "not sealed:" in en
    sealed = tmp_path / "sealed-site"
    assert main(["build", "--records", str(RECORDS), "--out", str(sealed), "--quiet"]) == 0
    assert "not sealed:" not in (sealed / "en" / "runs" / f"{run_id}.html").read_text(encoding="utf-8")
    assert "förseglad: resultatfilen" in (sealed / "sv" / "runs" / f"{run_id}.html").read_text(encoding="utf-8")


def test_score_seal_adds_only_the_seals_and_gives_the_bundled_record(tmp_path, capsys):
    root = _copy(tmp_path)
    unsealed = _unsealed(root)
    runs = _sealed_runs(RECORDS, lambda r: True)
    assert main(["score", "--records", str(root), runs[0]]) == 0
    said = capsys.readouterr().out
    assert f"(reproduces the record; not sealed: `sitegen score --seal {runs[0]}` seals it)" in said
    assert (root / "results.json").read_bytes() == unsealed, "plain score never adds a seal to a recorded run"
    assert main(["score", "--seal", "--records", str(root), runs[0]]) == 0
    assert "(reproduces the record; sealed now)" in capsys.readouterr().out
    one = json.loads((root / "results.json").read_text(encoding="utf-8"))
    bundled = json.loads((RECORDS / "results.json").read_text(encoding="utf-8"))
    assert [("seal" in r) for r in one["runs"]] == [r["run"] == runs[0] for r in one["runs"]]
    assert [r for r in one["runs"] if r["run"] == runs[0]] == [r for r in bundled["runs"] if r["run"] == runs[0]]
    assert main(["score", "--seal", "--all", "--records", str(root)]) == 0
    said = capsys.readouterr().out
    assert said.count("(reproduces the record; sealed now)") == len(runs) - 1
    assert (root / "results.json").read_bytes() == (RECORDS / "results.json").read_bytes()
    assert main(["score", "--seal", "--all", "--records", str(root)]) == 0
    assert capsys.readouterr().out.count("(reproduces the record; sealed)") == len(runs)


def test_score_seal_refuses_a_run_whose_counts_do_not_reproduce(tmp_path, capsys):
    root = _copy(tmp_path)
    unsealed = _unsealed(root)
    answers = json.loads((root / "answers.json").read_text(encoding="utf-8"))
    index = next(i for i, a in enumerate(answers["answers"]) if a["reviewers"] and a["reviewers"][0]["findings"]
                 and a["reviewers"][0]["findings"][0]["kind"] == "flaw")
    run_id = answers["answers"][index]["run"]

    def flip(value):
        value["answers"][index]["reviewers"][0]["findings"][0]["kind"] = "strength"

    _edit(root, "answers.json", flip)
    assert main(["score", "--seal", "--records", str(root), run_id]) == 2
    err = capsys.readouterr().err
    assert "[results.stale]" in err and "nothing was written" in err
    assert (root / "results.json").read_bytes() == unsealed


def test_score_refuses_to_pass_a_sealed_run_whose_input_changed(tmp_path, capsys):
    root = _copy(tmp_path)
    before = (root / "results.json").read_bytes()
    runs = json.loads((root / "runs.json").read_text(encoding="utf-8"))
    index = next(i for i, r in enumerate(runs["runs"]) if r["published"])
    _edit(root, "runs.json", lambda v: v["runs"][index].__setitem__("date", "2026-08-19"))
    assert main(["score", "--all", "--records", str(root)]) == 2
    err = capsys.readouterr().err
    assert f"/runs/{index}/date: error: run " in err and "[seal.changed]" in err
    assert (root / "results.json").read_bytes() == before


def test_check_seals_names_each_changed_input_from_loaded_records(tmp_path):
    root = _copy(tmp_path)
    assert check_seals(load_records(root), read_results((root / "results.json").read_bytes())) == []
    runs = json.loads((root / "runs.json").read_text(encoding="utf-8"))
    index = next(i for i, r in enumerate(runs["runs"]) if r["published"])
    _edit(root, "runs.json", lambda v: v["runs"][index].__setitem__("engine_version", "granska 0"))
    found = check_seals(load_records(root), read_results((root / "results.json").read_bytes()))
    assert [(d.path, d.pointer, d.code) for d in found] == [(str(root / "runs.json"), f"/runs/{index}/engine_version", "seal.changed")]


def test_score_all_unpacks_each_runs_answers_once_sealing_it_where_it_was_scored(tmp_path, monkeypatch, capsys):
    # a seal digests every answer of its run: taken right after the scoring, while the answers are unpacked, not again
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    unpacked: Counter = Counter()
    real = AnswerSpool._unpack
    monkeypatch.setattr(AnswerSpool, "_unpack", lambda self, run: unpacked.update([run]) or real(self, run))
    assert main(["score", "--all", "--records", str(root)]) == 0
    out = capsys.readouterr().out
    assert out.count("(reproduces the record; sealed)") >= 3
    assert unpacked and set(unpacked.values()) == {1}, unpacked


# --- an answer's digest: the canonical JSON the records documentation defines, whatever the text -----------------

_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=6) | st.sampled_from(['"', "\\", "\x00", "\u2028", "é", "}"])
_FINDING = st.builds(m.Finding, _TEXT, st.sampled_from([m.FLAW, m.STRENGTH]), _TEXT, st.lists(_TEXT, max_size=2).map(tuple),
                     st.booleans(), st.none() | _TEXT, st.none() | st.tuples(st.integers(1, 9), st.integers(1, 9)), _TEXT,
                     st.lists(_TEXT, max_size=2).map(tuple))
_ENGINE = st.builds(m.EngineAnswer, st.sampled_from([m.COMPLETED, m.CRASHED]),
                    st.lists(st.builds(m.Reviewer, _TEXT, st.lists(_FINDING, max_size=3).map(tuple)), max_size=2).map(tuple),
                    st.lists(st.builds(m.QuoteCorrection, _TEXT, _TEXT, _TEXT), max_size=2).map(tuple),
                    st.none() | st.lists(_FINDING, max_size=3).map(tuple))


def _documented(e):
    """docs/records.md's form of an engine answer, built here from the model's own fields."""
    if e is None:
        return None
    return {"status": e.status, "reviewers": [{"id": r.id, "findings": [f._asdict() for f in r.findings]} for r in e.reviewers],
            "quote_corrections": [c._asdict() for c in e.quote_corrections],
            "report": None if e.report is None else [f._asdict() for f in e.report]}


@settings(max_examples=200, deadline=None)
@given(_ENGINE, st.none() | _ENGINE)
def test_an_answers_seal_digest_is_the_sha256_of_its_documented_canonical_json(engine, rerun):
    answer = m.Answer("run", "cv", 1, engine, rerun, "answers.json")
    canonical = json.dumps({"answer": _documented(engine), "rerun": _documented(rerun)}, sort_keys=True,
                           separators=(",", ":"), ensure_ascii=False)
    assert answer_digest(answer) == hashlib.sha256(canonical.encode("utf-8")).hexdigest()
    assert answer_digest(answer) == digest(answer_form(answer))
