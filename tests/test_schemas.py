"""The published JSON Schemas are valid draft 2020-12, and a standard validator agrees with the loader about what is valid."""

import copy
import json
import re
import shutil
import sys
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from sitegen.core.errors import RecordsError
from sitegen.load.jsonread import read_json_text
from sitegen.load.records import load_records

REPO = Path(__file__).resolve().parent.parent
SCHEMAS = REPO / "sitegen" / "schemas"
SMALL = REPO / "tests" / "data" / "records-small"
FOLDERS = {"records": REPO / "records", "records-small": SMALL}
SCHEMA_FILES = sorted(p.name for p in SCHEMAS.glob("*.schema.json"))


def schema(name: str) -> dict:
    return json.loads((SCHEMAS / f"{name}.schema.json").read_text(encoding="utf-8"))


def files_of(folder: Path) -> list[tuple[str, str]]:
    """(records file, schema name) for every JSON file the folder's configuration names, plus the fixed ones."""
    config = json.loads((folder / "sitegen.json").read_text(encoding="utf-8"))
    found = [("sitegen.json", "config"), ("setups.json", "setups"), ("runs.json", "runs"), ("cases.json", "cases")]
    found += [(name, "answers") for name in config["answers"]]
    if (folder / "results.json").exists():
        found.append(("results.json", "results"))
    return found


def errors(name: str, document) -> list[str]:
    return [e.message for e in Draft202012Validator(schema(name)).iter_errors(document)]


def test_the_six_record_schemas_are_shipped():
    assert SCHEMA_FILES == [f"{n}.schema.json" for n in ("answers", "cases", "config", "results", "runs", "setups")]


@pytest.mark.parametrize("filename", SCHEMA_FILES)
def test_schema_is_valid_draft_2020_12(filename):
    value = json.loads((SCHEMAS / filename).read_text(encoding="utf-8"))
    assert value["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    Draft202012Validator.check_schema(value)
    assert value.get("additionalProperties") is False, "unknown top-level fields are errors"


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_every_records_file_validates_and_loads(folder):
    root = FOLDERS[folder]
    load_records(root)  # the loader accepts the folder ...
    checked = files_of(root)
    assert {name for name, _ in checked} == {p.name for p in root.glob("*.json")}, "every JSON file has a schema"
    for name, schema_name in checked:
        document = json.loads((root / name).read_text(encoding="utf-8"))
        assert errors(schema_name, document) == [], f"{folder}/{name}"  # ... and so does the standard validator
        assert document["format"] == schema(schema_name)["properties"]["format"]["const"]


def _rename_run(doc, new_id):
    doc["runs"][0]["id"] = new_id


INVALID = {
    # id: (file, schema, mutation, the code the loader gives)
    "unknown-field": ("cases.json", "cases", lambda d: d["case_versions"][0].update(colour="blue"), "record.unknown-field"),
    "unknown-field-deep": ("answers.json", "answers",
                           lambda d: d["answers"][0]["reviewers"][0]["findings"][0].update(severity=3), "record.unknown-field"),
    "internal-field": ("cases.json", "cases", lambda d: d["case_versions"][0].update(internal_rule_name="x"), "publish.internal-field"),
    "wrong-type-integer": ("runs.json", "runs", lambda d: d["runs"][0].update(repetitions="2"), "record.type"),
    "wrong-type-boolean": ("setups.json", "setups", lambda d: d["setups"][0]["configuration"].update(merge="yes"), "record.type"),
    "wrong-type-quote": ("answers.json", "answers",
                         lambda d: d["answers"][0]["reviewers"][0]["findings"][0].update(quote=5), "record.type"),
    "missing-field": ("runs.json", "runs", lambda d: d["runs"][0].pop("engine_version"), "record.missing-field"),
    "unsafe-id-slash": ("runs.json", "runs", lambda d: _rename_run(d, "../r1"), "record.unsafe-id"),
    "unsafe-id-upper": ("runs.json", "runs", lambda d: _rename_run(d, "Run-1"), "record.unsafe-id"),
    "unsafe-id-space": ("cases.json", "cases", lambda d: d["case_versions"][0].update(id="leak unchecked"), "record.unsafe-id"),
    "bad-kind": ("cases.json", "cases", lambda d: d["case_versions"][0]["key"]["expected"][0].update(kind="praise"), None),
    "bad-status": ("runs.json", "runs", lambda d: d["runs"][0].update(status="finished"), None),
}


def _mutated(tmp_path: Path, filename: str, mutate) -> tuple[Path, dict]:
    root = tmp_path / "records"
    shutil.copytree(SMALL, root)
    document = json.loads((root / filename).read_text(encoding="utf-8"))
    changed = copy.deepcopy(document)
    mutate(changed)
    assert changed != document
    (root / filename).write_text(json.dumps(changed, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return root, changed


@pytest.mark.parametrize("case", sorted(INVALID))
def test_what_the_loader_rejects_the_schema_rejects(tmp_path, case):
    filename, schema_name, mutate, code = INVALID[case]
    root, document = _mutated(tmp_path, filename, mutate)
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    codes = {d.code for d in caught.value.diagnostics}
    if code is not None:
        assert code in codes
    assert any(d.path.endswith(filename) for d in caught.value.diagnostics)
    assert errors(schema_name, document), f"jsonschema accepts what the loader refuses ({case})"


def test_an_id_with_two_dots_in_a_row_is_refused_by_loader_and_schema(tmp_path):
    """The record format: ids are lower-case letters, digits, . _ - with no `..` anywhere."""
    root, document = _mutated(tmp_path, "runs.json", lambda d: _rename_run(d, "r..1"))
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    assert "record.unsafe-id" in {d.code for d in caught.value.diagnostics}
    assert errors("runs", document)


@pytest.mark.parametrize("fixture", ["unknown-field", "wrong-type", "unsafe-id", "missing-field", "internal-field"])
def test_the_loader_fixtures_that_break_the_schema_break_it_for_jsonschema_too(fixture):
    folder = REPO / "tests" / "data" / "invalid" / fixture
    schema_of = dict(files_of(SMALL))
    (document_path,) = folder.glob("*.json")
    document = json.loads(document_path.read_text(encoding="utf-8"))
    assert errors(schema_of[document_path.name], document)


# --- the generated fast test agrees with the reporting validator --------------------------------------------------

from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from factories import json_paths  # noqa: E402
from sitegen.load import schema as schema_module  # noqa: E402
from sitegen.load.schemabasics import is_calendar_date  # noqa: E402
from sitegen.load.schemacompiler import Compiler  # noqa: E402
from sitegen.load.acceptor import Acceptor  # noqa: E402

_REPLACEMENTS = st.sampled_from([None, True, 0, 1, -1, 1.5, "", "x", "x..y", "UPPER", "flaw", "PASS", [], [1], {}, {"id": "x"},
                                 "2026-02-30", "2028-02-29", "2026-13-01"])


def _documents() -> list[tuple[str, object]]:
    return [(name, json.loads((folder / file).read_text(encoding="utf-8")))
            for folder in FOLDERS.values() for file, name in files_of(folder)]


def _reports(name: str, document) -> list[tuple[str, str]]:
    found: list[tuple[str, str]] = []
    schema_module._compiled(name)(document, None, lambda path, message, code: found.append((schema_module.pointer(path), code)))
    return found


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), replacement=_REPLACEMENTS, how=st.sampled_from(["replace", "delete", "add", "duplicate"]))
def test_the_fast_test_accepts_exactly_what_the_validator_finds_nothing_wrong_with(data, replacement, how):
    name, document = data.draw(st.sampled_from(_documents()))
    document = copy.deepcopy(document)
    place = data.draw(st.sampled_from(list(json_paths(document))[1:]))
    parent = document
    for step in place[:-1]:
        parent = parent[step]
    last = place[-1]
    if how == "replace":
        parent[last] = replacement
    elif how == "delete":
        del parent[last]
    elif how == "add" and isinstance(parent, dict):
        parent["unexpected_field"] = replacement
    elif how == "duplicate" and isinstance(parent, list):
        parent.append(copy.deepcopy(parent[last]))
    accepted = schema_module._accepted(name, None)(document)
    assert accepted == (not _reports(name, document)), _reports(name, document)


def test_the_fast_test_accepts_every_valid_records_file():
    for name, document in _documents():
        assert schema_module._accepted(name, None)(document), name


@pytest.mark.parametrize("day, real", [("2026-02-28", True), ("2028-02-29", True), ("2026-02-29", False), ("2026-02-30", False),
                                       ("2026-13-01", False), ("2026-00-10", False)])
def test_a_run_date_must_be_a_day_that_exists_for_the_fast_test_and_the_validator(day, real):
    """A date of the right form but no real day (2026-02-30) is refused while the schema is checked, with the other problems."""
    document = copy.deepcopy(json.loads((SMALL / "runs.json").read_text(encoding="utf-8")))
    document["runs"][1]["date"] = day
    assert schema_module._accepted("runs", None)(document) is real
    assert _reports("runs", document) == ([] if real else [("/runs/1/date", "record.date")])


def test_a_format_the_validator_does_not_know_is_refused_not_ignored():
    with pytest.raises(ValueError, match="format"):
        Compiler({}).compile({"type": "string", "format": "email"})


@pytest.mark.parametrize("text", ["2026-W48-7", "20261129", "2026-11-29T00:00", " 2026-11-29", "2026-02-30"])
def test_only_a_real_day_written_yyyy_mm_dd_is_a_calendar_date(text):
    """Python reads other ISO forms as dates too (a week date, the basic form); the records and entries do not."""
    assert not is_calendar_date(text)
    assert is_calendar_date("2028-02-29")


# --- issue 17: each schema's $id is the URL where it is served ---------------------------------------------------


@pytest.fixture(scope="module")
def small_site(tmp_path_factory) -> Path:
    from sitegen.build import build_site

    out = tmp_path_factory.mktemp("schemas") / "site"
    build_site(SMALL, out)
    return out


def test_a_shipped_schemas_id_is_the_path_it_is_served_at_below_the_site():
    for file in SCHEMA_FILES:
        assert json.loads((SCHEMAS / file).read_text(encoding="utf-8"))["$id"] == f"downloads/schemas/{file}"


def test_a_published_schemas_id_is_the_url_a_reader_can_open(small_site):
    """`$id` is base_url + downloads/schemas/NAME, and the file at that path of the built site is the schema itself."""
    base_url = json.loads((SMALL / "sitegen.json").read_text(encoding="utf-8"))["base_url"]
    served = sorted((small_site / "downloads" / "schemas").glob("*.schema.json"))
    assert [p.name for p in served] == SCHEMA_FILES
    for path in served:
        published = json.loads(path.read_text(encoding="utf-8"))
        assert published["$id"] == f"{base_url}downloads/schemas/{path.name}"
        assert small_site / published["$id"][len(base_url):] == path
        shipped = schema(path.name[: -len(".schema.json")])
        assert {k: v for k, v in published.items() if k != "$id"} == {k: v for k, v in shipped.items() if k != "$id"}


@pytest.mark.parametrize("folder", sorted(FOLDERS))
def test_the_records_are_valid_against_the_schemas_as_published(small_site, folder):
    """What the loader checks (the shipped copies) and what a reader downloads differ in `$id` alone."""
    for records_file, name in files_of(FOLDERS[folder]):
        published = json.loads((small_site / "downloads" / "schemas" / f"{name}.schema.json").read_text(encoding="utf-8"))
        document = json.loads((FOLDERS[folder] / records_file).read_text(encoding="utf-8"))
        assert not list(Draft202012Validator(published).iter_errors(document)), (folder, records_file)


def test_a_schema_without_its_id_written_once_is_refused():
    from sitegen.load.schema import served_schema

    with pytest.raises(ValueError, match=r"\$id"):
        served_schema(b'{"$id":"downloads/schemas/x.schema.json"}', "https://example.org/")
    assert json.loads(served_schema(b'{"$id": "downloads/schemas/x.schema.json"}', "https://example.org/q/"))["$id"] == \
        "https://example.org/q/downloads/schemas/x.schema.json"


@pytest.mark.parametrize("name", schema_module.schema_names())
def test_the_fast_test_looks_each_property_up_by_name_rather_than_comparing_every_key(name):
    # an answers file holds hundreds of thousands of objects: a key compared with each property name in turn costs a
    # string comparison per property per key, a property looked up by its name costs one dictionary lookup
    schema = schema_module.load_schema(name)
    acceptor = Acceptor(Compiler(schema))
    acceptor.build(schema)
    source = "\n".join(acceptor.functions)
    assert "key ==" not in source and "elif key" not in source


def test_the_fast_test_of_an_answers_file_searches_each_distinct_string_once():
    # ids, rule names and traces recur in every answer: a string that matched its pattern once is known by a lookup, for
    # as long as the test of that one file lives
    path = REPO / "records" / "answers.json"
    doc, problems = read_json_text(str(path), path.read_bytes())
    assert not problems
    strings: set[str] = set()

    def walk(value):
        if isinstance(value, str):
            strings.add(value)
        elif isinstance(value, dict):
            strings.update(value)
            for item in value.values():
                walk(item)
        elif isinstance(value, list):
            for item in value:
                walk(item)

    walk(json.loads(path.read_bytes()))
    searches = [0]

    def profile(frame, event, arg):
        if event == "c_call" and getattr(arg, "__name__", "") == "search" and isinstance(getattr(arg, "__self__", None),
                                                                                     re.Pattern):
            searches[0] += 1

    sys.setprofile(profile)
    try:
        items = list(schema_module.checked_items(doc, "answers", "answers"))
    finally:
        sys.setprofile(None)
    assert len(items) > 100
    assert 0 < searches[0] <= len(strings), (searches[0], len(strings))


def test_the_fast_test_of_an_answer_is_one_function_with_its_findings_checked_inline():
    # an answers file holds hundreds of thousands of findings: a call per finding, its location and its lists cost more
    # than the checks themselves
    schema = schema_module.load_schema("answers")
    acceptor = Acceptor(Compiler(schema))
    acceptor.build(schema["properties"]["answers"]["items"])
    tests = [f for f in acceptor.functions if not f.startswith(tuple(f"def {name}(" for name in acceptor.memos.values()))]
    assert len(tests) == 1, tests


def test_a_schema_that_refers_to_itself_is_checked_by_a_function_calling_itself_and_agrees_with_the_validator():
    schema = {"$defs": {"node": {"type": "object", "additionalProperties": False, "required": ["id"],
                                 "properties": {"id": {"type": "string", "minLength": 1},
                                                "children": {"type": "array", "items": {"$ref": "#/$defs/node"}}}}},
              "$ref": "#/$defs/node"}
    accepts = Acceptor(Compiler(schema)).build(schema).fresh()
    check = Compiler(schema).compile(schema)
    documents = [{"id": "a"}, {"id": "a", "children": [{"id": "b", "children": [{"id": "c"}]}]},
                 {"id": "a", "children": [{"id": "b", "children": [{"id": ""}]}]}, {"id": "a", "children": [{"ids": "b"}]},
                 {"id": "a", "children": [{"id": "b", "children": [{"id": "c", "x": 1}]}]}, {"id": 1}, []]
    for document in documents:
        found = []
        check(document, None, lambda path, message, code: found.append(code))
        assert accepts(document) == (not found), (document, found)
