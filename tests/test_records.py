"""The loader: a small valid corpus loads; each invalid fixture gives exactly its located diagnostic; nothing else escapes."""

import json
import shutil
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factories import json_paths
from sitegen.core import model as m
from sitegen.core.errors import RecordsError
from sitegen.load.records import load_records
from sitegen.load.setups import fingerprint, setup_fingerprints

DATA = Path(__file__).parent / "data"
SMALL = DATA / "records-small"
INVALID = sorted(p.name for p in (DATA / "invalid").iterdir())


def overlay(tmp_path: Path, fixture: str | None) -> Path:
    target = tmp_path / "records"
    shutil.copytree(SMALL, target)
    if fixture:
        for f in (DATA / "invalid" / fixture).glob("*.json"):
            shutil.copy(f, target / f.name)
    return target


def test_small_corpus_loads(tmp_path):
    records = load_records(overlay(tmp_path, None))
    assert [r.id for r in records.runs] == ["r1", "r2", "r3"]
    assert len(records.answers) == 18
    leak = records.case_versions["leak-unchecked"]
    (key,) = leak.key.expected
    assert key.passage == m.Passage("Läckan är åtgärdad.", (3, 3))  # lines follow from where the quote stands
    assert records.case_versions["tap-clean"].clean and not leak.clean
    assert records.stages(records.run("r1")) == ("reviewer",) and records.stages(records.run("r2")) == ("reviewer", "report")
    assert records.files["cases.json"].data == (SMALL / "cases.json").read_bytes()


@pytest.mark.parametrize("fixture", INVALID)
def test_invalid_fixture_gives_its_exact_diagnostics(tmp_path, fixture):
    root = overlay(tmp_path, fixture)
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    lines = [line.replace(str(root) + "/", "records/") for line in caught.value.lines()]
    expected = (DATA / "invalid" / fixture / "expected.txt").read_text(encoding="utf-8").splitlines()
    assert lines == expected


def test_a_prohibited_finding_identical_to_an_expected_one_is_a_record_error_whatever_the_order_of_its_rules(tmp_path):
    # the accepted primary rules are a set: listing them in another order does not make the prohibited finding different
    root = overlay(tmp_path, None)
    cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    key = cases["case_versions"][0]["key"]
    key["expected"][0]["rules"] = ["R-ATGARD-2", "R-DATUM-1"]
    key["prohibited"][0].update(kind="flaw", missing=True, rules=["R-DATUM-1", "R-ATGARD-2"])
    (root / "cases.json").write_text(json.dumps(cases, ensure_ascii=False, indent=2), encoding="utf-8")
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    (line,) = caught.value.lines()
    assert line.endswith("[record.prohibited-is-expected]") and '"praise-fixed"' in line and '"checker-missing"' in line


def test_in_a_crlf_document_a_passage_by_lines_is_the_same_span_as_the_quote_of_those_lines(tmp_path):
    # METHOD.md: identical means the same passage however it is written; a line is its characters without its line
    # break, so in a document with "\r\n" breaks the lines' carriage returns are not part of the passage
    root = overlay(tmp_path, None)
    cases = json.loads((root / "cases.json").read_text(encoding="utf-8"))
    case = cases["case_versions"][0]
    case["document"] = case["document"].replace("\n", "\r\n")
    lines = case["document"].split("\r\n")
    key = case["key"]
    key["expected"][0]["passage"] = {"lines": [2, 2]}
    key["prohibited"][0].update(kind="flaw", missing=True, passage={"quote": lines[1]})
    (root / "cases.json").write_text(json.dumps(cases, ensure_ascii=False, indent=2), encoding="utf-8")
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    (line,) = caught.value.lines()
    assert line.endswith("[record.prohibited-is-expected]") and '"praise-fixed"' in line and '"checker-missing"' in line


# --- worker processes: the same records and the same problems as one process -----------------------

REPOSITORY_RECORDS = Path(__file__).resolve().parent.parent / "records"


def _loaded_or_problems(root: Path, jobs: int):
    try:
        return load_records(root, jobs=jobs), ()
    except RecordsError as exc:
        return None, exc.diagnostics


@pytest.mark.parametrize("root", [SMALL, REPOSITORY_RECORDS], ids=["small", "repository"])
def test_workers_load_the_same_records(root):
    alone, apart = load_records(root), load_records(root, jobs=2)
    assert apart == alone  # every field, the answers compared unpacked
    assert list(apart.answers) == list(alone.answers)
    assert [apart.answers.source(k) for k in apart.answers] == [alone.answers.source(k) for k in alone.answers]
    assert list(apart.files.items()) == list(alone.files.items())
    assert apart.results_json == alone.results_json


@pytest.mark.parametrize("fixture", INVALID)
def test_workers_report_the_same_problems(tmp_path, fixture):
    root = overlay(tmp_path, fixture)
    alone, apart = _loaded_or_problems(root, 1), _loaded_or_problems(root, 2)
    assert alone[1] and apart[1] == alone[1]  # located, in the same order


def _move_first_answer(root: Path, source: str, target: str, *, keep: bool) -> None:
    """Copy (or move) the first answer of one answers file to the end of another."""
    a = json.loads((root / source).read_text("utf-8"))
    b = json.loads((root / target).read_text("utf-8"))
    b["answers"].append(a["answers"][0])
    if not keep:
        del a["answers"][0]
    (root / source).write_text(json.dumps(a, ensure_ascii=False, indent=2), "utf-8")
    (root / target).write_text(json.dumps(b, ensure_ascii=False, indent=2), "utf-8")


@pytest.mark.parametrize("keep", [True, False], ids=["duplicated", "moved"])
def test_workers_see_answers_across_files(tmp_path, keep):
    """An answer standing in two files is reported once, at the second; one moved to another file is simply there."""
    root = overlay(tmp_path, None)
    _move_first_answer(root, "answers.json", "answers-hidden.json", keep=keep)
    alone, apart = _loaded_or_problems(root, 1), _loaded_or_problems(root, 2)
    assert apart[1] == alone[1]
    if keep:
        assert [d.code for d in alone[1] if "also in answers.json" in d.message] == ["record.duplicate-id"]
    else:
        assert apart[0] == alone[0] and list(apart[0].answers) == list(alone[0].answers)


def test_workers_report_a_broken_answers_file_as_one_process(tmp_path):
    root = overlay(tmp_path, "unpublished-leak")
    path = root / "answers.json"
    path.write_text(path.read_text("utf-8").replace('"repetition": 1,', '"repetition": "1",', 1), "utf-8")
    alone, apart = _loaded_or_problems(root, 1), _loaded_or_problems(root, 2)
    assert "record.type" in {d.code for d in alone[1]} and apart[1] == alone[1]


def test_all_problems_are_reported_in_one_pass(tmp_path):
    root = overlay(tmp_path, None)
    for fixture in ("unknown-field", "json-duplicate-key", "fingerprint"):
        for f in (DATA / "invalid" / fixture).glob("*.json"):
            shutil.copy(f, root / f.name)
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    codes = sorted(d.code for d in caught.value.diagnostics if d.severity == "error")
    assert codes == ["json.duplicate-key", "record.fingerprint", "record.unknown-field"]


def test_fingerprint_is_sha256_of_canonical_configuration():
    import hashlib

    configuration = {"b": [1, "å"], "a": {"merge": True}}
    canonical = '{"a":{"merge":true},"b":[1,"å"]}'.encode("utf-8")
    assert fingerprint(configuration) == hashlib.sha256(canonical).hexdigest()


def _edit_setups(root: Path, edit) -> None:
    path = root / "setups.json"
    value = json.loads(path.read_text(encoding="utf-8"))
    edit(value["setups"])
    path.write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")


def test_setup_fingerprints_need_no_right_stored_fingerprint(tmp_path):
    """A new setup (no fingerprint), a placeholder, an edited configuration: the records do not load, the fingerprints come."""
    root = overlay(tmp_path, None)

    def edit(setups):
        del setups[0]["fingerprint"]
        setups[1]["configuration"]["model"] = "edited"
        setups.append({"id": "new", "configuration": {"merge": True}, "fingerprint": "x"})

    _edit_setups(root, edit)
    with pytest.raises(RecordsError):
        load_records(root)
    setups = json.loads((root / "setups.json").read_text(encoding="utf-8"))["setups"]
    found = setup_fingerprints(root)
    assert [(f.setup, f.computed, f.stored) for f in found] == [
        (setups[0]["id"], fingerprint(setups[0]["configuration"]), None),
        (setups[1]["id"], fingerprint(setups[1]["configuration"]), setups[1]["fingerprint"]),
        ("new", fingerprint({"merge": True}), "x"),
    ]
    assert not any(f.matches for f in found)


def test_setup_fingerprints_match_what_the_loader_computes(tmp_path):
    records = load_records(overlay(tmp_path, None))
    found = setup_fingerprints(SMALL)
    assert {f.setup: f.computed for f in found} == {s.id: s.fingerprint for s in records.setups.values()}
    assert all(f.matches for f in found)


def test_setup_fingerprints_refuse_setups_without_a_valid_configuration(tmp_path):
    root = overlay(tmp_path, None)

    def edit(setups):
        del setups[0]["configuration"]
        setups[1]["configuration"] = {"model": "no merge"}

    _edit_setups(root, edit)
    with pytest.raises(RecordsError) as caught:
        setup_fingerprints(root)
    found = sorted((d.pointer, d.code) for d in caught.value.diagnostics)
    assert found == [("/setups/0", "record.missing-field"), ("/setups/1/configuration", "record.missing-field")]
    assert all(d.path == str(root / "setups.json") and d.line is not None for d in caught.value.diagnostics)


def test_setup_fingerprints_refuse_an_unreadable_file_and_repeated_ids(tmp_path):
    root = overlay(tmp_path, None)
    (root / "setups.json").write_text("{", encoding="utf-8")
    with pytest.raises(RecordsError) as caught:
        setup_fingerprints(root)
    assert [d.code for d in caught.value.diagnostics if d.severity == "error"] == ["json.syntax"]
    shutil.copy(SMALL / "setups.json", root / "setups.json")
    _edit_setups(root, lambda setups: setups.append(dict(setups[0])))
    with pytest.raises(RecordsError) as caught:
        setup_fingerprints(root)
    assert [d.code for d in caught.value.diagnostics] == ["record.duplicate-id"]
    with pytest.raises(RecordsError) as caught:
        setup_fingerprints(tmp_path / "nowhere")
    assert [d.code for d in caught.value.diagnostics] == ["record.folder-missing"]


def test_missing_folder_and_file(tmp_path):
    with pytest.raises(RecordsError) as caught:
        load_records(tmp_path / "nowhere")
    assert caught.value.diagnostics[0].code == "record.folder-missing"
    assert caught.value.diagnostics[0].message == "records folder does not exist"
    (tmp_path / "a-file").write_text("{}")
    with pytest.raises(RecordsError) as caught:  # a file named as the records folder is called what it is
        load_records(tmp_path / "a-file")
    assert [(d.code, d.message) for d in caught.value.diagnostics] == [("record.folder-missing",
                                                                       "is not a folder: name the records folder")]
    root = overlay(tmp_path, None)
    (root / "setups.json").unlink()
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    assert [d.code for d in caught.value.diagnostics] == ["record.file-missing"]


def test_results_record_may_be_absent_before_first_scoring(tmp_path):
    root = overlay(tmp_path, None)
    (root / "results.json").unlink()
    assert load_records(root).results_json is None


# --- property: mutated records load or raise RecordsError, never anything else ------------------

_MUTATIONS = st.sampled_from(["delete", "null", "string", "number", "list", "object", "duplicate"])


def _mutate(value, path, how):
    if not path:
        return value
    parent = value
    for step in path[:-1]:
        parent = parent[step]
    last = path[-1]
    replacement = {"null": None, "string": "x y", "number": -1.5, "list": [], "object": {}}.get(how)
    if how == "delete":
        del parent[last]
    elif how == "duplicate" and isinstance(parent, list):
        parent.append(json.loads(json.dumps(parent[last])))
    else:
        parent[last] = replacement
    return value


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data(), file=st.sampled_from(["cases.json", "answers.json", "runs.json", "setups.json", "sitegen.json"]),
       how=_MUTATIONS)
def test_mutated_records_load_or_raise_records_error(tmp_path_factory, data, file, how):
    root = tmp_path_factory.mktemp("mut") / "records"
    shutil.copytree(SMALL, root)
    value = json.loads((root / file).read_text(encoding="utf-8"))
    paths = list(json_paths(value))
    path = data.draw(st.sampled_from(paths))
    mutated = _mutate(value, path, how)
    (root / file).write_text(json.dumps(mutated, ensure_ascii=False), encoding="utf-8")
    try:
        load_records(root)
    except RecordsError as exc:
        assert exc.diagnostics and all(d.path and d.message and d.code for d in exc.diagnostics)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(junk=st.binary(max_size=64), offset=st.integers(min_value=0, max_value=4000))
def test_corrupted_bytes_never_escape_as_anything_else(tmp_path_factory, junk, offset):
    root = tmp_path_factory.mktemp("bytes") / "records"
    shutil.copytree(SMALL, root)
    data = (root / "cases.json").read_bytes()
    (root / "cases.json").write_bytes(data[:offset] + junk + data[offset:])
    try:
        load_records(root)
    except RecordsError as exc:
        assert exc.diagnostics


def test_a_valid_answers_file_is_read_answer_by_answer(tmp_path, monkeypatch):
    """The whole-file parse is kept for files with a problem; a valid answers file never builds its whole tree."""
    import sitegen.load.reading as reading_module

    whole = reading_module.parse_json

    def refuse_answers(path, data):
        assert "answers" not in Path(path).name, f"{path} was parsed whole"
        return whole(path, data)

    monkeypatch.setattr(reading_module, "parse_json", refuse_answers)
    assert len(load_records(overlay(tmp_path, None)).answers) == 18


@pytest.mark.parametrize("old, new, pointer, code", [
    ('"repetition": 1,', '"repetition": "1",', "/answers/0/repetition", "record.type"),
    ('"status": "completed",', '"status": "completed", "status": "crashed",', "/answers/0/status", "json.duplicate-key"),
    ('"missing": true,', '"missing": NaN,', None, "json.syntax"),
])
def test_a_broken_answers_file_is_reported_exactly_as_any_file(tmp_path, old, new, pointer, code):
    root = overlay(tmp_path, None)
    path = root / "answers.json"
    text = path.read_text("utf-8")
    assert old in text
    path.write_text(text.replace(old, new, 1), "utf-8")
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    (found,) = [d for d in caught.value.diagnostics if d.path.endswith("answers.json") and d.severity == "error"]
    line = text[: text.index(old)].count("\n") + 1
    assert (found.code, found.pointer, found.line) == (code, pointer, line)


def test_a_trailing_comma_in_the_answers_is_a_syntax_error(tmp_path):
    root = overlay(tmp_path, None)
    path = root / "answers.json"
    text = path.read_text("utf-8").rstrip()
    assert text.endswith("}\n  ]\n}")
    path.write_text(text[: -len("\n  ]\n}")] + ",\n  ]\n}\n", "utf-8")
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    assert [d.code for d in caught.value.diagnostics if d.severity == "error"] == ["json.syntax"]


def test_a_leaked_unpublished_run_is_reported_once_per_file_with_its_count(tmp_path):
    """All of an unpublished run's answers in a published file are one problem, placed at the first and counted, not one line each."""
    import json

    root = overlay(tmp_path, None)
    hidden = json.loads((root / "answers-hidden.json").read_text(encoding="utf-8"))
    answers = json.loads((root / "answers.json").read_text(encoding="utf-8"))
    first = len(answers["answers"])
    answers["answers"].extend(hidden["answers"])
    hidden["answers"] = []
    (root / "answers.json").write_text(json.dumps(answers, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (root / "answers-hidden.json").write_text(json.dumps(hidden, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    leaks = [d for d in caught.value.diagnostics if d.code == "publish.unpublished-run"]
    assert len(leaks) == 1
    (leak,) = leaks
    assert leak.pointer == f"/answers/{first}/run" and leak.path.endswith("answers.json")
    assert leak.message == 'answer of unpublished run "r3" in a published file (and 5 more of its answers in this file)'
