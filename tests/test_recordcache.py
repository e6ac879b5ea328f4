"""The results record's entries read before (score/recordcache.py): the same spool as a whole reading, only new entries
read, and anything damaged, foreign or laid out otherwise read as without a cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.core.errors import RecordsError
from sitegen.score import recordcache
from sitegen.score.recordcache import RecordEntries, read_by_entry
from sitegen.score.results import read_results

SMALL = Path(__file__).resolve().parent / "data" / "records-small"


def _same(a, b) -> bool:
    return list(a) == list(b) and all(a[run] == b[run] and a.digest(run) == b.digest(run) for run in a)


@pytest.fixture
def record() -> bytes:
    return (SMALL / "results.json").read_bytes()


def _reading(monkeypatch) -> list[int]:
    """The sizes of the records read_results reads (whole, or one entry alone)."""
    sizes: list[int] = []
    read = recordcache.read_results

    def counted(data, **kwargs):
        sizes.append(len(data))
        return read(data, **kwargs)

    monkeypatch.setattr(recordcache, "read_results", counted)
    return sizes


def test_entries_read_before_are_not_read_again(tmp_path, record, monkeypatch):
    cache = RecordEntries(tmp_path / "results", b"source")
    whole = read_results(record)
    assert len(whole) >= 2
    sizes = _reading(monkeypatch)
    assert _same(_read(record, cache), whole)
    assert len(sizes) == len(whole) and all(size < len(record) for size in sizes)
    sizes.clear()
    assert _same(_read(record, cache), whole)
    assert sizes == []


@pytest.mark.parametrize("damage", ["edited", "truncated", "not a packed result", "no digest", "not a digest"])
def test_a_damaged_or_foreign_entry_is_read_again(tmp_path, record, damage):
    from sitegen.core.files import framed, read_framed
    import marshal
    cache = RecordEntries(tmp_path / "results", b"source")
    _read(record, cache)
    for entry in (tmp_path / "results").iterdir():
        data = entry.read_bytes()
        if damage == "edited":
            entry.write_bytes(data[:-9] + b"x" + data[-8:])
        elif damage == "truncated":
            entry.write_bytes(data[: len(data) // 2])
        elif damage == "not a packed result":
            entry.write_bytes(framed(recordcache.ENTRY_MAGIC, marshal.dumps(("r1", "not bytes", "PASS", (), "0" * 64), 4)))
        else:  # a packed result kept without its digest, or with one that is not a digest
            kept = marshal.loads(read_framed(entry, recordcache.ENTRY_MAGIC))
            entry.write_bytes(framed(recordcache.ENTRY_MAGIC, marshal.dumps(kept[:4] if damage == "no digest" else
                                                                            (*kept[:4], kept[4].upper()), 4)))
    assert _same(_read(record, cache), read_results(record))


def test_a_record_laid_out_otherwise_or_with_a_problem_is_read_whole(tmp_path, record):
    cache = RecordEntries(tmp_path / "results", b"source")
    other = json.dumps(json.loads(record)).encode("utf-8")  # one line: not sitegen's layout
    assert _same(_read(other, cache), read_results(other))
    assert not (tmp_path / "results").exists()
    doc = json.loads(record)
    doc["runs"].append(doc["runs"][0])  # a run twice: the whole reading says where
    from sitegen.score.results import write_results
    twice = record.replace(b"\n  ]\n}\n", b",\n    " + record.split(b'"runs": [\n    ')[1].split(b"\n    },\n    {")[0] + b"\n    }\n  ]\n}\n")
    with pytest.raises(RecordsError) as cached:
        _read(twice, cache)
    with pytest.raises(RecordsError) as whole:
        read_results(twice, path="results.json")
    assert cached.value.diagnostics == whole.value.diagnostics
    broken = record.replace(b'"outcome": "', b'"outcome": 7, "x": "', 1)
    with pytest.raises(RecordsError) as cached:
        _read(broken, RecordEntries(tmp_path / "other", b"source"))
    with pytest.raises(RecordsError) as whole:
        read_results(broken, path="results.json")
    assert cached.value.diagnostics == whole.value.diagnostics


def _read(data: bytes, cache: RecordEntries | None):
    return read_by_entry(data, path="results.json", unpacking=_nothing, kept=cache)


def test_without_a_cache_the_record_read_an_entry_at_a_time_is_the_record_read_whole(record):
    """What every build without --cache does: the same spool and digests, and the same diagnostics for a record with a
    problem, as reading it whole."""
    assert _same(_read(record, None), read_results(record))
    other = json.dumps(json.loads(record)).encode("utf-8")  # one line: not sitegen's layout
    assert _same(_read(other, None), read_results(other))
    broken = record.replace(b'"outcome": "', b'"outcome": 7, "x": "', 1)
    with pytest.raises(RecordsError) as alone:
        _read(broken, None)
    with pytest.raises(RecordsError) as whole:
        read_results(broken, path="results.json")
    assert alone.value.diagnostics == whole.value.diagnostics


def _nothing():
    from contextlib import nullcontext
    return nullcontext()


def test_an_entry_keeps_the_digest_of_its_values_so_a_later_read_takes_it_unpacked(tmp_path, record, monkeypatch):
    cache = RecordEntries(tmp_path / "results", b"source")
    whole = read_results(record)
    _read(record, cache)
    import sitegen.load.spool as spool_module
    unpacked: list[bytes] = []
    decompress = spool_module.zlib.decompress
    monkeypatch.setattr(spool_module.zlib, "decompress", lambda data: unpacked.append(data) or decompress(data))
    again = _read(record, cache)
    digests = {run: again.digest(run) for run in again}
    assert unpacked == [], "the digests came with the entries"
    monkeypatch.undo()
    assert digests == {run: whole.digest(run) for run in whole}
