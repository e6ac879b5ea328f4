"""Answers that repeat an earlier one's text but for their run, case version and repetition are taken without decoding
them again: the answers and every problem are exactly those of reading each answer afresh."""

import json
import shutil
from pathlib import Path

import pytest

import sitegen.load.answers as answers_module
from sitegen.core.errors import RecordsError
from sitegen.load.jsonread import JsonText, iter_json_items
from sitegen.load.records import load_records
from sitegen.load.repeats import Repeat, Repeats

DATA = Path(__file__).parent / "data"
SMALL = DATA / "records-small"
INVALID = sorted(p.name for p in (DATA / "invalid").iterdir())
ANSWERS_FILES = ("answers.json", "answers-hidden.json")


def _one_per_line(answers: list, format: str = "sitegen.answers/1") -> str:
    """An answers file in the layout an engine's runner writes (and benchmarks/generate.py): one answer a line."""
    lines = ",\n    ".join(json.dumps(a, ensure_ascii=False) for a in answers)
    return f'{{\n  "format": {json.dumps(format)},\n  "answers": [\n    {lines}\n  ]\n}}\n'


def _relaid(root: Path) -> None:
    """Every answers file that parses laid out one answer a line, its values unchanged."""
    for name in ANSWERS_FILES:
        path = root / name
        try:
            doc = json.loads(path.read_text(encoding="utf-8"))
        except ValueError:
            continue  # a fixture of bad JSON stays as it is
        if isinstance(doc, dict) and isinstance(doc.get("answers"), list) and set(doc) == {"format", "answers"}:
            path.write_text(_one_per_line(doc["answers"], doc["format"]), encoding="utf-8")


class _Counted:
    """Counts the answers taken as repeats."""

    def __init__(self, monkeypatch):
        self.repeats = 0
        original = Repeats.repeat

        def counted(repeats, text, pos):
            found = original(repeats, text, pos)
            self.repeats += found is not None
            return found

        monkeypatch.setattr(Repeats, "repeat", counted)


def _outcome(root: Path):
    try:
        records = load_records(root)
    except RecordsError as exc:
        return [line.replace(str(root) + "/", "records/") for line in exc.lines()]
    return {key: records.answers[key] for key in records.answers}


def _both(root: Path, monkeypatch):
    """What loading gives with repeats recognised, and with every answer read afresh."""
    with_repeats = _outcome(root)
    with monkeypatch.context() as patch:
        patch.setattr(answers_module, "repeats_of", lambda *args: None)
        afresh = _outcome(root)
    return with_repeats, afresh


def _copy(tmp_path: Path, fixture: str | None = None) -> Path:
    root = tmp_path / "records"
    shutil.copytree(SMALL, root)
    if fixture:
        for f in (DATA / "invalid" / fixture).glob("*.json"):
            shutil.copy(f, root / f.name)
    return root


def _repeated(root: Path, edit=None) -> None:
    """answers.json one answer a line, each repetition 2 answered as repetition 1 of its run and case version (so most
    lines are repeats), then `edit(answers)` applied."""
    doc = json.loads((root / "answers.json").read_text(encoding="utf-8"))
    first = {(a["run"], a["case_version"]): a for a in doc["answers"] if a["repetition"] == 1}
    answers = [dict(first[a["run"], a["case_version"]], repetition=a["repetition"]) for a in doc["answers"]]
    if edit:
        edit(answers)
    (root / "answers.json").write_text(_one_per_line(answers), encoding="utf-8")


def test_repeated_answers_are_recognised_and_load_as_read_afresh(tmp_path, monkeypatch):
    root = _copy(tmp_path)
    _repeated(root)
    counted = _Counted(monkeypatch)
    with_repeats, afresh = _both(root, monkeypatch)
    assert counted.repeats == 6  # repetition 2 of each of r1's and r2's three case versions
    assert isinstance(with_repeats, dict) and with_repeats == afresh
    assert with_repeats[("r1", "tap-clean", 2)].answer is with_repeats[("r1", "tap-clean", 1)].answer


@pytest.mark.parametrize("fixture", INVALID)
def test_every_invalid_fixture_one_answer_a_line_gives_the_same_problems(tmp_path, monkeypatch, fixture):
    root = _copy(tmp_path, fixture)
    _relaid(root)
    with_repeats, afresh = _both(root, monkeypatch)
    assert with_repeats == afresh


def _duplicate_finding_id(answers):
    reviewer = answers[0]["reviewers"][0]
    reviewer["findings"] = reviewer["findings"] + reviewer["findings"][:1]


def _report_dropped(answers):
    # r2 goes through the merge and r1 does not: r1's first answer (no report) under r2's run repeats text kept for r1
    index = next(i for i, a in enumerate(answers) if a["run"] == "r2")
    answers[index] = dict(answers[0], run="r2", case_version=answers[index]["case_version"], repetition=answers[index]["repetition"])


@pytest.mark.parametrize("edit, code", [
    (_duplicate_finding_id, "record.duplicate-id"),  # the answer repeated is not kept: its repeat is checked afresh
    (lambda answers: answers[3].update(repetition=0), "record.value"),  # a repeat's own members fail the schema
    (lambda answers: answers[3].update(repetition=3), "record.repetition"),
    (lambda answers: answers[3].update(run="Run"), "record.unsafe-id"),
    (lambda answers: answers[3].update(case_version="no-such-case"), "record.dangling-reference"),
    (lambda answers: answers[3].update(case_version=answers[0]["case_version"], repetition=1), "record.duplicate-id"),
    (_report_dropped, "record.report-missing"),  # kept under one setup's merge, repeated under another's
])
def test_a_repeat_with_a_problem_is_reported_as_read_afresh(tmp_path, monkeypatch, edit, code):
    root = _copy(tmp_path)
    _repeated(root, edit)
    with_repeats, afresh = _both(root, monkeypatch)
    assert isinstance(with_repeats, list) and any(f"[{code}]" in line for line in with_repeats), with_repeats
    assert with_repeats == afresh


def _items(text: str, kept: object = "kept") -> list:
    """The items iter_json_items gives for `text` when every decoded item is kept as `kept`."""
    repeats = Repeats((("id", "string"), ("n", "integer")))
    found = []
    for _, item in iter_json_items(JsonText("x.json", text), "items", repeats):
        found.append(item)
        if type(item) is not Repeat:
            repeats.keep(kept)
    return found


def test_a_repeat_ends_where_its_kept_text_ended_whatever_follows_on_its_line():
    tail = '"v": [1, {"w": "a\\"b"}]}'
    text = ('{"items": [{"id": "a", "n": 1, ' + tail + ', {"id": "b", "n": -2, ' + tail + '  ,\n'
            '  {"id": "c", "n": 30, ' + tail + ' \t\n, {"id": "d", "n": 4, "v": 5}\n]}')
    assert _items(text) == [{"id": "a", "n": 1, "v": [1, {"w": 'a"b'}]}, Repeat({"id": "b", "n": -2}, "kept"),
                            Repeat({"id": "c", "n": 30}, "kept"), {"id": "d", "n": 4, "v": 5}]


def test_leading_members_not_in_their_plain_form_are_decoded():
    tail = '"v": 1}'
    text = ('{"items": [\n{"id": "a", "n": 1, ' + tail + ',\n{"id": "\\u0062", "n": 1, ' + tail + ',\n{"id": "c", "n": 1.0, '
            + tail + ',\n{"n": 1, "id": "d", ' + tail + ',\n{"id": "e",  "n": 1, ' + tail + ',\n{"id": "f", "n": 1, ' + tail + '\n]}')
    assert [type(item) is Repeat for item in _items(text)] == [False, False, False, False, False, True]
