"""The results record's entries read before (score/recordcache.py): the same spool as a whole reading, only new entries
read, and anything damaged, foreign or laid out otherwise read as without a cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from sitegen.core.errors import RecordsError
from sitegen.score import recordcache
from sitegen.score.recordcache import RecordEntries
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
    assert _same(cache.read(record, path="results.json", unpacking=_nothing), whole)
    assert len(sizes) == len(whole) and all(size < len(record) for size in sizes)
    sizes.clear()
    assert _same(cache.read(record, path="results.json", unpacking=_nothing), whole)
    assert sizes == []


@pytest.mark.parametrize("damage", ["edited", "truncated", "not a packed result", "no digest", "not a digest"])
def test_a_damaged_or_foreign_entry_is_read_again(tmp_path, record, damage):
    from sitegen.core.files import framed, read_framed
    import marshal
    cache = RecordEntries(tmp_path / "results", b"source")
    cache.read(record, path="results.json", unpacking=_nothing)
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
    assert _same(cache.read(record, path="results.json", unpacking=_nothing), read_results(record))


def test_a_record_laid_out_otherwise_or_with_a_problem_is_read_whole(tmp_path, record):
    cache = RecordEntries(tmp_path / "results", b"source")
    other = json.dumps(json.loads(record)).encode("utf-8")  # one line: not sitegen's layout
    assert _same(cache.read(other, path="results.json", unpacking=_nothing), read_results(other))
    assert not (tmp_path / "results").exists()
    doc = json.loads(record)
    doc["runs"].append(doc["runs"][0])  # a run twice: the whole reading says where
    from sitegen.score.results import write_results
    twice = record.replace(b"\n  ]\n}\n", b",\n    " + record.split(b'"runs": [\n    ')[1].split(b"\n    },\n    {")[0] + b"\n    }\n  ]\n}\n")
    with pytest.raises(RecordsError) as cached:
        cache.read(twice, path="results.json", unpacking=_nothing)
    with pytest.raises(RecordsError) as whole:
        read_results(twice, path="results.json")
    assert cached.value.diagnostics == whole.value.diagnostics
    broken = record.replace(b'"outcome": "', b'"outcome": 7, "x": "', 1)
    with pytest.raises(RecordsError) as cached:
        RecordEntries(tmp_path / "other", b"source").read(broken, path="results.json", unpacking=_nothing)
    with pytest.raises(RecordsError) as whole:
        read_results(broken, path="results.json")
    assert cached.value.diagnostics == whole.value.diagnostics


def _nothing():
    from contextlib import nullcontext
    return nullcontext()


def test_an_entry_keeps_the_digest_of_its_values_so_a_later_read_takes_it_unpacked(tmp_path, record, monkeypatch):
    cache = RecordEntries(tmp_path / "results", b"source")
    whole = read_results(record)
    cache.read(record, path="results.json", unpacking=_nothing)
    import sitegen.load.spool as spool_module
    unpacked: list[bytes] = []
    decompress = spool_module.zlib.decompress
    monkeypatch.setattr(spool_module.zlib, "decompress", lambda data: unpacked.append(data) or decompress(data))
    again = cache.read(record, path="results.json", unpacking=_nothing)
    digests = {run: again.digest(run) for run in again}
    assert unpacked == [], "the digests came with the entries"
    monkeypatch.undo()
    assert digests == {run: whole.digest(run) for run in whole}
