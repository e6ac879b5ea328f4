"""The cache of answers files checked before: used only for the same bytes and the same facts, never for a changed or
damaged entry, and the records and problems are those of a load without it."""

import json
import marshal
import shutil
import zlib
from pathlib import Path

import pytest

import sitegen.load.answers as answers_module
from sitegen.core.errors import RecordsError
from sitegen.core.files import framed
from sitegen.load.answercache import ENTRY_MAGIC, CheckedAnswers
from sitegen.load.records import load_records

DATA = Path(__file__).parent / "data"
SMALL = DATA / "records-small"
INVALID = sorted(p.name for p in (DATA / "invalid").iterdir())


def _records(tmp_path: Path, fixture: str | None = None) -> Path:
    target = tmp_path / "records"
    if not target.exists():
        shutil.copytree(SMALL, target)
    if fixture:
        for f in (DATA / "invalid" / fixture).glob("*.json"):
            shutil.copy(f, target / f.name)
    return target


def _cache(tmp_path: Path) -> CheckedAnswers:
    return CheckedAnswers(tmp_path / "cache" / "answers", b"sitegen source")


def _loaded(root: Path, jobs: int = 1, cache: CheckedAnswers | None = None):
    """The answers and files loaded, or the problems (as lines) when the records do not load."""
    try:
        records = load_records(root, jobs=jobs, answers_cache=cache)
    except RecordsError as exc:
        return None, [line.replace(str(root) + "/", "records/") for line in exc.lines()]
    return {key: records.answers[key] for key in records.answers}, dict(records.files)


class _Reads:
    """Counts the answers files read and checked afresh (decoded, validated, packed)."""

    def __init__(self, monkeypatch):
        self.names: list[str] = []
        original = answers_module._read_answers

        def counted(root, name, *args, **kwargs):
            self.names.append(name)
            return original(root, name, *args, **kwargs)

        monkeypatch.setattr(answers_module, "_read_answers", counted)
        dispatch = answers_module.ordered_map

        def sent(function, tasks, **kwargs):  # files read in worker processes, named as they are sent
            tasks = list(tasks)
            self.names.extend(task.name for task in tasks)
            return dispatch(function, tasks, **kwargs)

        monkeypatch.setattr(answers_module, "ordered_map", sent)


@pytest.mark.parametrize("jobs", [1, 2])
def test_an_unchanged_answers_file_is_taken_from_the_cache_with_the_same_answers(tmp_path, monkeypatch, jobs):
    root, cache = _records(tmp_path), _cache(tmp_path)
    without = _loaded(root, jobs)
    assert _loaded(root, jobs, cache) == without  # the first load fills the cache
    assert len(list(cache.root.iterdir())) == 2  # answers.json and answers-hidden.json
    reads = _Reads(monkeypatch)
    assert _loaded(root, jobs, cache) == without
    assert reads.names == []  # neither file decoded or checked again


@pytest.mark.parametrize("jobs", [1, 2])
def test_a_changed_answers_file_is_never_served_from_the_cache(tmp_path, monkeypatch, jobs):
    root, cache = _records(tmp_path), _cache(tmp_path)
    _loaded(root, jobs, cache)
    path = root / "answers.json"
    doc = json.loads(path.read_text("utf-8"))
    finding = next(f for a in doc["answers"] for r in a["reviewers"] for f in r["findings"])
    finding["wording"] = "An edited wording."
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=2), "utf-8")
    reads = _Reads(monkeypatch)
    answers, files = _loaded(root, jobs, cache)
    assert reads.names == ["answers.json"]
    assert "An edited wording." in {f.wording for a in answers.values() for r in a.answer.reviewers for f in r.findings}
    assert (answers, files) == _loaded(root, jobs)


def _damaged(entry: Path, how: str) -> None:
    data = entry.read_bytes()
    body = data[len(ENTRY_MAGIC) + 65:]
    if how == "flipped":  # fails its own digest
        entry.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    elif how == "truncated":
        entry.write_bytes(data[: len(data) // 2])
    elif how == "foreign":  # another kind of entry
        entry.write_bytes(framed(b"sitegen-verified/1\n", body))
    elif how == "not-marshal":
        entry.write_bytes(framed(ENTRY_MAGIC, b"\xff not marshal"))
    else:  # its own digest, but a finding pointing outside its table
        facts, parts = marshal.loads(body)
        run, keys, blob = parts[0]
        findings, engines, rows = marshal.loads(zlib.decompress(blob))
        status, reviewers, corrections, report = engines[0]
        engines = ((status, ((reviewers[0][0], (len(findings) + 5,)),), corrections, report),) + engines[1:]
        blob = zlib.compress(marshal.dumps((findings, engines, rows)))
        entry.write_bytes(framed(ENTRY_MAGIC, marshal.dumps((facts, ((run, keys, blob),) + parts[1:]))))


@pytest.mark.parametrize("how", ["flipped", "truncated", "foreign", "not-marshal", "out-of-table"])
def test_a_corrupt_or_foreign_entry_is_ignored_and_the_file_checked_afresh(tmp_path, monkeypatch, how):
    root, cache = _records(tmp_path), _cache(tmp_path)
    without = _loaded(root)
    _loaded(root, 1, cache)
    for entry in cache.root.iterdir():
        _damaged(entry, how)
    reads = _Reads(monkeypatch)
    assert _loaded(root, 1, cache) == without
    assert sorted(reads.names) == ["answers-hidden.json", "answers.json"]
    reads.names.clear()
    assert _loaded(root, 1, cache) == without  # the entries were replaced by good ones
    assert reads.names == []


def test_an_entry_of_another_sitegen_is_not_used(tmp_path, monkeypatch):
    root = _records(tmp_path)
    _loaded(root, 1, _cache(tmp_path))
    reads = _Reads(monkeypatch)
    _loaded(root, 1, CheckedAnswers(tmp_path / "cache" / "answers", b"another sitegen source"))
    assert sorted(reads.names) == ["answers-hidden.json", "answers.json"]


@pytest.mark.parametrize("jobs", [1, 2])
@pytest.mark.parametrize("fixture", INVALID)
def test_the_problems_are_the_same_with_a_cache_filled_from_valid_records(tmp_path, fixture, jobs):
    # every invalid fixture, over records whose answers files were cached while valid: the facts its checks read
    # changed (a run, a suite, a setup), or the file itself, and the problems are exactly those of a load without cache
    root, cache = _records(tmp_path), _cache(tmp_path)
    assert _loaded(root, jobs, cache)[0] is not None
    _records(tmp_path, fixture)
    with_cache, without = _loaded(root, jobs, cache), _loaded(root, jobs)
    assert without[0] is None and with_cache == without


def test_a_run_made_unpublished_or_shorter_after_caching_gives_the_problems_of_a_fresh_read(tmp_path):
    root, cache = _records(tmp_path), _cache(tmp_path)
    _loaded(root, 1, cache)
    runs = json.loads((root / "runs.json").read_text("utf-8"))
    runs["runs"][0]["published"] = False
    runs["runs"][1]["repetitions"] = 1
    (root / "runs.json").write_text(json.dumps(runs, ensure_ascii=False, indent=2), "utf-8")
    with_cache, without = _loaded(root, 1, cache), _loaded(root, 1)
    assert without[0] is None and with_cache == without
    assert any("publish.unpublished-run" in line for line in without[1])
    assert any("record.repetition" in line for line in without[1])


def test_an_answer_found_in_an_earlier_file_is_reported_as_without_a_cache(tmp_path):
    root, cache = _records(tmp_path), _cache(tmp_path)
    path = root / "sitegen.json"
    config = json.loads(path.read_text("utf-8"))
    shutil.copy(root / "answers-hidden.json", root / "answers-copy.json")
    names = config["answers"]
    config["answers"] = [n for n in names if n != "answers-hidden.json"] + ["answers-copy.json"]
    path.write_text(json.dumps(config, ensure_ascii=False, indent=2), "utf-8")
    _loaded(root, 1, cache)  # answers-copy.json is cached as clean: no file read before it holds its answers
    assert len(list(cache.root.iterdir())) == 2
    config["answers"] = names + ["answers-copy.json"]
    path.write_text(json.dumps(config, ensure_ascii=False, indent=2), "utf-8")
    for jobs in (1, 2):
        with_cache, without = _loaded(root, jobs, cache), _loaded(root, jobs)
        assert without[0] is None and with_cache == without
        assert any("record.duplicate-id" in line and "answers-copy.json" in line for line in without[1])
