"""Hostile and broken records: each is refused at load with a located diagnostic and exit 2, never a traceback or a hang."""

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from sitegen.cli import main
from sitegen.core.errors import RecordsError
from sitegen.load.records import load_records

DATA = Path(__file__).parent / "data"
SMALL = DATA / "records-small"
REPO = Path(__file__).resolve().parent.parent
LOCATED = re.compile(r"^(?P<path>[^:]+):(?P<line>\d+):(?P<col>\d+): (?:(?P<pointer>/\S*): )?(?P<severity>error|note): "
                     r"(?P<message>.+) \[(?P<code>[a-z][a-z.-]+)\]$")


def copy_small(tmp_path: Path) -> Path:
    root = tmp_path / "records"
    shutil.copytree(SMALL, root)
    return root


def edit(root: Path, name: str, change) -> None:
    value = json.loads((root / name).read_text("utf-8"))
    change(value)
    (root / name).write_text(json.dumps(value, indent=2, ensure_ascii=False) + "\n", "utf-8")


def replace_text(root: Path, name: str, old: str, new: str) -> str:
    text = (root / name).read_text("utf-8")
    assert old in text
    (root / name).write_text(text.replace(old, new, 1), "utf-8")
    return text


def problems(root: Path) -> list:
    with pytest.raises(RecordsError) as caught:
        load_records(root)
    return [d for d in caught.value.diagnostics if d.severity == "error"]


def build_lines(root: Path, tmp_path: Path, capsys) -> list[str]:
    """`sitegen build` through main: exit 2, every line a located diagnostic, nothing written."""
    code = main(["build", "--records", str(root), "--out", str(tmp_path / "site")])
    err = capsys.readouterr().err
    assert code == 2, err
    assert "Traceback" not in err
    lines = err.splitlines()
    err.encode("utf-8")  # printable as it is: no lone surrogate reaches the terminal
    assert not (tmp_path / "site").exists()
    return lines


# --- 1. a lone surrogate --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, old, new, pointer", [
    ("cases.json", '"title": "Leak fixed, checker', '"title": "\\ud800Leak fixed, checker', "/case_versions/0/title"),
    ("cases.json", '"document": "', '"document": "\\udfff', "/case_versions/0/document"),
    ("answers.json", '"wording": "', '"wording": "x\\udbff', "/answers/0/reviewers/0/findings/0/wording"),
])
def test_a_lone_surrogate_in_record_text_is_refused_at_load_and_located(tmp_path, capsys, name, old, new, pointer):
    root = copy_small(tmp_path)
    text = replace_text(root, name, old, new)
    (found,) = [d for d in problems(root) if d.code == "json.surrogate"]
    assert found.path == str(root / name) and found.pointer == pointer
    line = text[: text.index(old)].count("\n") + 1
    assert found.line == line and found.column is not None
    assert any(l.endswith("[json.surrogate]") and f": {pointer}: error: " in l for l in build_lines(root, tmp_path, capsys))


def test_a_surrogate_pair_escaped_in_json_is_one_character_and_loads(tmp_path):
    root = copy_small(tmp_path)
    replace_text(root, "cases.json", '"title": "Leak fixed, checker', '"title": "\\ud83d\\ude00 Leak fixed, checker')
    assert load_records(root).case_versions["leak-unchecked"].title.startswith("\U0001F600 ")


# --- 2. nesting -----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("name, old", [
    ("runs.json", '"published": true,'),  # the free-form internal object
    ("answers.json", '"rerun": null'),
    ("cases.json", '"variant": null'),
])
def test_json_nested_5000_deep_is_a_located_error_not_a_recursion_error(tmp_path, capsys, name, old):
    root = copy_small(tmp_path)
    key = old.split(":")[0]
    deep = "[" * 5000 + "]" * 5000
    new = f'"internal": {deep}, {old}' if name == "runs.json" else f"{key}: {deep}"
    text = replace_text(root, name, old, new)
    (found,) = [d for d in problems(root) if d.path.endswith(name)]
    assert found.code == "json.too-deep"
    assert found.line == text[: text.index(old)].count("\n") + 1
    assert found.pointer.count("/0") >= 60
    assert any(l.endswith("[json.too-deep]") for l in build_lines(root, tmp_path, capsys))


# --- 3. a source URL that urlsplit cannot take apart -------------------------------------------------------------

def test_a_changelog_source_with_an_unclosed_ipv6_bracket_is_a_located_error(tmp_path, capsys):
    root = copy_small(tmp_path)
    entry = root / "changelog" / "2026-01-01-scorer-5.md"
    lines = entry.read_text("utf-8").split("\n")
    number = next(i for i, line in enumerate(lines, 1) if line.startswith("source: "))
    lines[number - 1] = "source: https://[::1"
    entry.write_text("\n".join(lines), "utf-8")
    (found,) = problems(root)
    assert (found.path, found.line, found.column, found.code) == (str(entry), number, 9, "entry.bad-source")
    assert any(l.startswith(f"{entry}:{number}:9: error: ") for l in build_lines(root, tmp_path, capsys))


@pytest.mark.parametrize("value", ["https://[::1", "https://host:port/x", "https://:443/"])
def test_entry_new_refuses_a_source_urlsplit_cannot_take_apart(tmp_path, capsys, value):
    code = main(["entry", "new", "--records", str(tmp_path), "--category", "test-cases", "--date", "2026-01-01",
                 "--source", value])
    err = capsys.readouterr().err
    assert code == 2 and "Traceback" not in err
    assert err.startswith("--source: error: ") and err.rstrip().endswith("[entry.bad-source]")
    assert not (tmp_path / "changelog").exists() or not any((tmp_path / "changelog").iterdir())


# --- 4. maximums ------------------------------------------------------------------------------------------------------

def _nodes(node, place=""):
    if isinstance(node, dict):
        yield place, node
        for key, value in node.items():
            yield from _nodes(value, f"{place}/{key}")
    elif isinstance(node, list):
        for index, value in enumerate(node):
            yield from _nodes(value, f"{place}/{index}")


def _bounded(pattern: str | None) -> bool:
    """Whether a pattern anchored at both ends bounds the length: no *, + or {n,} outside its lookaheads."""
    if not pattern or not (pattern.startswith("^") and pattern.endswith("$")):
        return False
    kept, depth, skipping = [], 0, None
    for index, char in enumerate(pattern):
        if char == "(":
            depth += 1
            if skipping is None and pattern.startswith(("(?!", "(?="), index):
                skipping = depth
        if skipping is None:
            kept.append(char)
        if char == ")":
            if skipping == depth:
                skipping = None
            depth -= 1
    return not re.search(r"(?<!\\)[*+]|\{\d+,\}", "".join(kept))


@pytest.mark.parametrize("schema", sorted(p.name for p in (REPO / "sitegen" / "schemas").glob("*.json")))
def test_every_count_and_size_in_the_schemas_has_a_maximum(schema):
    value = json.loads((REPO / "sitegen" / "schemas" / schema).read_text("utf-8"))
    unbounded = []
    for place, node in _nodes(value):
        types = node.get("type")
        types = types if isinstance(types, list) else [types]
        if "integer" in types and "maximum" not in node:
            unbounded.append(place)
        if "string" in types and "maxLength" not in node and not _bounded(node.get("pattern")):
            unbounded.append(place)
        if "array" in types and "maxItems" not in node and not ("uniqueItems" in node and "enum" in node.get("items", {})):
            unbounded.append(place)
    assert unbounded == [], f"{schema}: no maximum at {unbounded}"


def test_a_run_of_10_to_the_20_repetitions_is_refused_at_once_and_located(tmp_path):
    root = copy_small(tmp_path)
    text = replace_text(root, "runs.json", '"repetitions": 2', '"repetitions": 100000000000000000000')
    # a subprocess, so that a loop over the number would show as a timeout here, not as a hung test run
    done = subprocess.run([sys.executable, "-m", "sitegen", "build", "--records", str(root), "--out", str(tmp_path / "site")],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    line = text[: text.index('"repetitions": 2')].count("\n") + 1
    assert f"runs.json:{line}:" in done.stderr and "/runs/0/repetitions: error: " in done.stderr
    assert "[record.too-large]" in done.stderr and "Traceback" not in done.stderr


@pytest.mark.parametrize("name, old, new, pointer", [
    ("cases.json", '"title": "Leak fixed, checker', '"title": "' + "x" * 1001, "/case_versions/0/title"),
    ("answers.json", '"repetition": 1,', '"repetition": 101,', "/answers/0/repetition"),
])
def test_sizes_beyond_the_documented_maximum_are_refused(tmp_path, name, old, new, pointer):
    root = copy_small(tmp_path)
    replace_text(root, name, old, new)
    found = [d for d in problems(root) if d.path.endswith(name)]
    assert found and {d.code for d in found} <= {"record.too-large", "record.too-long"}
    if pointer:
        assert found[0].pointer == pointer


def test_a_line_number_beyond_the_maximum_is_refused(tmp_path):
    root = copy_small(tmp_path)
    edit(root, "cases.json", lambda v: v["case_versions"][0]["key"]["expected"][0]["passage"].update(lines=[1, 1000001]))
    (found,) = problems(root)
    assert (found.code, found.pointer) == ("record.too-large", "/case_versions/0/key/expected/0/passage/lines/1")


def test_the_record_format_documents_the_maximums():
    text = (REPO / "docs" / "records.md").read_text("utf-8")
    for limit in ("100 repetitions", "1,000,000 characters", "64"):
        assert limit in text


# --- 5. patterns read as JSON Schema reads them ------------------------------------------------------------------

@pytest.mark.parametrize("name, change, pointer", [
    ("runs.json", lambda v: v["runs"][0].update(id=v["runs"][0]["id"] + "\n"), "/runs/0/id"),
    ("runs.json", lambda v: v["runs"][0].update(date=v["runs"][0]["date"] + "\n"), "/runs/0/date"),
    ("cases.json", lambda v: v["case_versions"][0].update(id=v["case_versions"][0]["id"] + "\n"), "/case_versions/0/id"),
    ("sitegen.json", lambda v: v["publish"][0].update(name=v["publish"][0]["name"] + "\n"), "/publish/0/name"),
    ("setups.json", lambda v: v["setups"][0].update(fingerprint=v["setups"][0]["fingerprint"] + "\n"), "/setups/0/fingerprint"),
])
def test_a_trailing_newline_does_not_satisfy_a_pattern_ending_in_dollar(tmp_path, name, change, pointer):
    root = copy_small(tmp_path)
    edit(root, name, change)
    assert pointer in {d.pointer for d in problems(root) if d.path.endswith(name)}


def _schema_patterns() -> list[str]:
    found = set()
    for path in (REPO / "sitegen" / "schemas").glob("*.json"):
        for _, node in _nodes(json.loads(path.read_text("utf-8"))):
            if isinstance(node.get("pattern"), str):
                found.add(node["pattern"])
    return sorted(found)


PROBES = ["r1", "r1\n", "\nr1", "a.json", "a.json\n", "dir/a.json", "2026-01-01", "2026-01-01\n", "https://x.org/", "https://x.org/\n",
          "https://x.org", "sv", "sv\n", "R-X-1", "R-X-1\n", "0" * 64, "0" * 64 + "\n", "1-2", "1-2\n", "con", "con.x", "CON",
          "Nul.json", "com1", "lpt9.txt", "console", "index", "schemas", "SHA256SUMS", "x" * 101, "a..b", "a//b.json", ""]


def test_the_validator_reads_every_schema_pattern_as_ecma_262_does():
    """JSON Schema patterns are ECMA-262 regular expressions; node's RegExp is the reference (jsonschema uses Python's re.search,
    which lets `$` match before a final newline, so it cannot be the judge of this one rule)."""
    from sitegen.load.schemabasics import compile_pattern

    node = shutil.which("node")
    assert node, "node is installed by scripts/test.sh (Debian's npm)"
    patterns = _schema_patterns()
    script = ("const [patterns, probes] = JSON.parse(require('fs').readFileSync(0, 'utf8'));"
              "process.stdout.write(JSON.stringify(patterns.map(p => probes.map(s => new RegExp(p, 'u').test(s)))));")
    done = subprocess.run([node, "-e", script], input=json.dumps([patterns, PROBES]), capture_output=True, text=True, timeout=60,
                          check=True)
    expected = json.loads(done.stdout)
    ours = [[compile_pattern(p).search(s) is not None for s in PROBES] for p in patterns]
    assert ours == expected


# --- 6. and 7. what may be read and published -----------------------------------------------------------------------

@pytest.mark.parametrize("field", ["answers", "record"])
def test_a_records_file_that_climbs_out_of_the_records_folder_is_refused(tmp_path, field):
    root = copy_small(tmp_path)
    (tmp_path / "x.json").write_text((root / "answers-hidden.json").read_text("utf-8"), "utf-8")

    def change(v):
        if field == "answers":
            v["answers"][1] = "changelog/../../x.json"
        else:
            v["publish"][0]["record"] = "changelog/../../x.json"

    edit(root, "sitegen.json", change)
    found = [d for d in problems(root) if d.path.endswith("sitegen.json")]
    assert [d.pointer for d in found] == ["/answers/1" if field == "answers" else "/publish/0/record"]
    assert found[0].line is not None


@pytest.mark.parametrize("field", ["answers", "record"])
def test_a_records_file_that_is_a_link_out_of_the_records_folder_is_refused(tmp_path, field):
    root = copy_small(tmp_path)
    outside = tmp_path / "elsewhere.json"
    shutil.move(root / "answers-hidden.json", outside)
    (root / "answers-hidden.json").symlink_to(outside)
    if field == "record":
        edit(root, "sitegen.json", lambda v: v["publish"].append({"record": "answers-hidden.json", "name": "hidden.json"}))
    found = [d for d in problems(root) if d.code == "record.outside-records"]
    place = "/answers/1" if field == "answers" else "/publish/3/record"
    assert place in [d.pointer for d in found] and all(d.path == str(root / "sitegen.json") and d.line for d in found)


@pytest.mark.parametrize("record", ["runs.json", "setups.json", "sitegen.json"])
def test_publishing_a_record_not_meant_for_publication_is_refused(tmp_path, record):
    root = copy_small(tmp_path)
    edit(root, "sitegen.json", lambda v: v["publish"].append({"record": record, "name": "extra.json"}))
    (found,) = problems(root)
    assert (found.code, found.pointer, found.path) == ("publish.not-publishable", "/publish/3/record", str(root / "sitegen.json"))
    assert found.line is not None


# --- 8. names that collide with the site or with a file system -------------------------------------------------------

def test_a_run_id_index_is_refused_at_load_and_located(tmp_path):
    root = copy_small(tmp_path)
    for name in ("runs.json", "answers.json", "answers-hidden.json", "results.json"):
        path = root / name
        path.write_text(path.read_text("utf-8").replace('"r2"', '"index"'), "utf-8")
    found = [d for d in problems(root) if d.code == "record.reserved-id"]
    assert [(d.path, d.pointer) for d in found] == [(str(root / "runs.json"), "/runs/1/id")] and found[0].line


@pytest.mark.parametrize("name", ["schemas", "Schemas", "SHA256SUMS", "sha256sums", "x" * 300, "CON", "nul.json", "Aux.txt", "com1",
                                  "LPT9.json", "prn"])
def test_a_publish_name_the_site_or_a_file_system_would_refuse_is_refused_at_load(tmp_path, name):
    root = copy_small(tmp_path)
    edit(root, "sitegen.json", lambda v: v["publish"][0].update(name=name))
    (found,) = problems(root)
    assert (found.path, found.pointer, found.code) == (str(root / "sitegen.json"), "/publish/0/name", "record.value")
    assert found.line is not None


def test_two_publish_names_that_differ_only_in_case_are_refused_at_both(tmp_path):
    """On a file system that ignores case (macOS, Windows) they are one file, and a downloaded copy of the site fails
    its SHA256SUMS."""
    root = copy_small(tmp_path)
    edit(root, "sitegen.json", lambda v: v["publish"][1].update(name=v["publish"][0]["name"].upper()))
    found = problems(root)
    assert [(d.path, d.pointer, d.code) for d in found] == [(str(root / "sitegen.json"), f"/publish/{i}/name", "record.duplicate-id")
                                                           for i in (0, 1)]
    assert all(d.line is not None and "case" in d.message for d in found)


@pytest.mark.parametrize("name", ["consolidated.json", "nullable", "com10", "lpt", "schemas.json", "index"])
def test_names_that_only_resemble_reserved_ones_are_published(tmp_path, name):
    root = copy_small(tmp_path)
    edit(root, "sitegen.json", lambda v: v["publish"][0].update(name=name))
    load_records(root)


@pytest.mark.parametrize("reserved", ["con", "prn", "aux", "nul", "com1", "lpt9", "con.x", "nul.tar.gz", "aux-x.y".replace("-x", "")])
def test_ids_windows_reserves_are_refused(tmp_path, reserved):
    root = copy_small(tmp_path)
    edit(root, "cases.json", lambda v: v["case_versions"][0].update(id=reserved))
    assert "/case_versions/0/id" in {d.pointer for d in problems(root) if d.code == "record.unsafe-id"}


def test_a_utf8_error_in_a_changelog_entry_gives_line_and_column(tmp_path):
    root = copy_small(tmp_path)
    entry = root / "changelog" / "2026-01-01-scorer-5.md"
    data = entry.read_bytes()
    lines = data.split(b"\n")
    body = len(lines) - 2 if lines[-1] == b"" else len(lines) - 1
    lines[body] = "Åå ".encode("utf-8") + b"\xff" + lines[body]
    entry.write_bytes(b"\n".join(lines))
    (found,) = problems(root)
    assert (found.path, found.line, found.column, found.code) == (str(entry), body + 1, 4, "entry.encoding")


# --- 15. all problems in one run -------------------------------------------------------------------------------------

def test_four_independent_problems_in_four_files_are_all_reported_in_one_run(tmp_path, capsys):
    """Four problems a robustness probe needed three runs to see: an unknown field in cases.json, a duplicate finding id in
    answers.json, an impossible date in runs.json, a truncated results.json."""
    root = copy_small(tmp_path)
    edit(root, "cases.json", lambda v: v["case_versions"][0].update(colour="blue"))

    def duplicate_finding(v):
        answer = next(a for a in v["answers"] if a["report"] and a["report"]["findings"] and a["reviewers"][0]["findings"])
        answer["report"]["findings"][0]["id"] = answer["reviewers"][0]["findings"][0]["id"]

    edit(root, "answers.json", duplicate_finding)
    edit(root, "runs.json", lambda v: v["runs"][0].update(date="2026-02-30"))
    results = (root / "results.json").read_bytes()
    (root / "results.json").write_bytes(results[: len(results) // 2])
    lines = build_lines(root, tmp_path, capsys)
    parsed = [LOCATED.match(line) for line in lines]
    assert all(parsed), lines
    errors = {(Path(p["path"]).name, p["code"]) for p in parsed if p["severity"] == "error"}
    assert errors == {("cases.json", "record.unknown-field"), ("answers.json", "record.duplicate-id"),
                      ("runs.json", "record.date"), ("results.json", "json.syntax")}
    notes = [p for p in parsed if p["severity"] == "note"]
    assert sorted(Path(p["path"]).name for p in notes) == ["cases.json", "runs.json"]  # one each, at the file's problem
    assert all(p["code"] == "record.checks-waited" and "not checked until this file loads" in p["message"] for p in notes)


def test_answers_are_checked_in_themselves_when_no_other_record_loads(tmp_path):
    root = copy_small(tmp_path)
    for name in ("runs.json", "cases.json", "setups.json"):
        (root / name).write_text("{", "utf-8")
    replace_text(root, "answers.json", '"trace": [', '"trace": ["no-such-finding", ')
    codes = {(Path(d.path).name, d.code) for d in problems(root)}
    assert ("answers.json", "record.dangling-trace") in codes
    assert {("runs.json", "json.syntax"), ("cases.json", "json.syntax"), ("setups.json", "json.syntax")} <= codes


def test_a_control_character_in_a_key_cannot_break_or_forge_a_diagnostic_line(tmp_path, capsys):
    """Found by the fuzz campaign: "\\report" is a key holding a carriage return, and the line printed for it was cut in two."""
    root = copy_small(tmp_path)
    replace_text(root, "answers.json", '"report": ', '"\\report\\n/x: error: forged [x]\\u202e": ')
    lines = build_lines(root, tmp_path, capsys)
    assert all(LOCATED.match(line) for line in lines), lines
    (line,) = [line for line in lines if "unknown-field" in line]
    assert "\\u000deport\\u000a/x: error: forged [x]\\u202e" in line


def test_brackets_that_never_close_are_too_deep_not_a_recursion_error(tmp_path, capsys):
    """Found by the fuzz campaign: 5,000 "[" that never close, inserted into setups.json."""
    root = copy_small(tmp_path)
    text = replace_text(root, "setups.json", '"setups": [', '"setups": [' + "[" * 5000)
    (found,) = [d for d in problems(root) if d.path.endswith("setups.json")]
    assert (found.code, found.line) == ("json.too-deep", text[: text.index('"setups": [')].count("\n") + 1)
    assert any(l.endswith("[json.too-deep]") for l in build_lines(root, tmp_path, capsys))


def test_a_number_of_5000_digits_is_a_located_syntax_error(tmp_path):
    root = copy_small(tmp_path)
    text = replace_text(root, "runs.json", '"repetitions": 2', '"repetitions": ' + "9" * 5000)
    (found,) = [d for d in problems(root) if d.path.endswith("runs.json")]
    assert (found.code, found.line) == ("json.syntax", text[: text.index('"repetitions": 2')].count("\n") + 1)


@pytest.mark.parametrize("name, old, new", [
    # found by the fuzz campaign (seed 4242): a setup doubled into a key of its own, then the file cut short
    ("setups.json", '"setups": [', '"x": {"merge": true, "merge": false}, "setups": ['),
    ("answers.json", '"rerun": null', '"rerun": {"status": "completed", "status": "crashed"}'),
])
@pytest.mark.parametrize("cut", ["[", "NaN"])
def test_a_duplicate_key_in_a_file_malformed_after_it_is_the_syntax_error_not_a_traceback(tmp_path, capsys, name, old, new, cut):
    root = copy_small(tmp_path)
    text = replace_text(root, name, old, new)
    broken = (root / name).read_text("utf-8")
    (root / name).write_text(broken[: broken.index(new) + len(new)] + cut, "utf-8")
    (found,) = [d for d in problems(root) if d.path.endswith(name)]
    assert found.code == "json.syntax" and found.line == text[: text.index(old)].count("\n") + 1
    assert any(l.endswith("[json.syntax]") for l in build_lines(root, tmp_path, capsys))


_BUILD_IN_A_CHILD = "import sys; from sitegen.cli import main; sys.exit(main(['build', '--records', sys.argv[1], '--out', sys.argv[2]]))"


@pytest.mark.parametrize("name", ["sitegen.json", "cases.json", "runs.json", "setups.json", "answers.json", "results.json"])
@pytest.mark.parametrize("kind", ["named pipe", "directory"])
def test_a_records_file_that_is_not_a_regular_file_is_refused_not_waited_on(tmp_path, name, kind):
    """A named pipe would make reading it wait for a writer for ever; it is refused at once, placed at the file. The build
    runs in a child process with a time limit, so a wait fails this test instead of hanging the suite."""
    import os

    root = copy_small(tmp_path)
    (root / name).unlink()
    if kind == "named pipe":
        os.mkfifo(root / name)
    else:
        (root / name).mkdir()
    done = subprocess.run([sys.executable, "-c", _BUILD_IN_A_CHILD, str(root), str(tmp_path / "site")], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr
    reason = "not a regular file" if kind == "named pipe" else "Is a directory"
    assert f"{root / name}: error: cannot read file: {reason}" in done.stderr, done.stderr
    assert not (tmp_path / "site").exists()
