"""The results record's canonical writer: the same bytes as the per-value writer it replaced, from a few C encoder calls."""

import dataclasses
import json
import shutil
import sys
import weakref
from unittest import mock
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

import sitegen.score.results as results_module
import sitegen.score.verify as verify
from sitegen.cli import main
from sitegen.core import model as m
from sitegen.load.records import load_records
from sitegen.score import entrywriter
from sitegen.load.spool import ResultSpool
from sitegen.score.results import (FORMAT, EntryPrint, canonical_json, difference_shown, entry_print, read_results, result_to_json,
                                   write_results, writes_as)

RECORDS = Path(__file__).resolve().parent.parent / "records"
SITEGEN = str(Path(results_module.__file__).resolve().parent.parent)


def reference_canonical_json(value: object) -> bytes:
    """The writer as it was until the C-encoded one (kept verbatim as the oracle): one json.dumps per one-line value."""
    parts: list[str] = []
    _reference_encode(value, "", parts)
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def _reference_scalar(value: object) -> bool:
    return not isinstance(value, (dict, list))


def _reference_encode(value: object, indent: str, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
        elif all(_reference_scalar(v) for v in value.values()):
            out.append(json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": ")))
        else:
            inner = indent + "  "
            out.append("{")
            for index, key in enumerate(sorted(value)):
                out.append(("," if index else "") + "\n" + inner + json.dumps(key, ensure_ascii=False) + ": ")
                _reference_encode(value[key], inner, out)
            out.append("\n" + indent + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
        elif all(_reference_scalar(v) for v in value):
            out.append(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")))
        else:
            inner = indent + "  "
            out.append("[")
            for index, item in enumerate(value):
                out.append(("," if index else "") + "\n" + inner)
                _reference_encode(item, inner, out)
            out.append("\n" + indent + "]")
    else:
        out.append(json.dumps(value, ensure_ascii=False))


# strings built to look like the writer's own separators and boundaries, beside any other text (lone surrogates are
# left out: neither writer can encode them as UTF-8)
HOSTILE = st.sampled_from(["},\n{", "],\n[", ", ", ",\n", "\x00", "\n", '"', "\\", "}", "]", "{", "[", "\u2028",
                           "\u202e", "\ufeff", "å", "😀", "\x1f", "\t", ": "])
TEXT = st.lists(st.one_of(HOSTILE, st.text(st.characters(exclude_categories=("Cs",)), max_size=8)), max_size=4).map("".join)
SCALARS = st.one_of(
    st.none(), st.booleans(), TEXT,
    st.integers(), st.integers(min_value=-(10 ** 40), max_value=10 ** 40),
    st.floats(allow_nan=True, allow_infinity=True),
)
JSON = st.recursive(SCALARS, lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(TEXT, inner, max_size=5)),
                    max_leaves=40)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_the_canonical_writer_gives_the_bytes_of_the_per_value_writer(value):
    assert canonical_json(value) == reference_canonical_json(value)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.dictionaries(TEXT, st.one_of(SCALARS, st.lists(SCALARS, max_size=3)), max_size=4), max_size=30))
def test_many_one_line_values_side_by_side_keep_their_boundaries(observations):
    # the shape of the results record: lists of one-line objects, which the writer encodes in one call and splits apart
    value = {"runs": [{"observations": observations, "run": "r"}]}
    assert canonical_json(value) == reference_canonical_json(value)


def test_the_bundled_results_record_is_written_back_byte_for_byte():
    data = (RECORDS / "results.json").read_bytes()
    assert canonical_json(json.loads(data)) == data
    assert write_results(read_results(data)) == data


def test_the_writer_encodes_a_large_record_in_a_few_encoder_calls_not_one_per_line(monkeypatch):
    # "as fast as C json.dumps": the cost of the record must not be a Python call into the encoder per line of it
    calls = []
    real_encode = json.JSONEncoder.encode
    real_dumps = json.dumps
    monkeypatch.setattr(json.JSONEncoder, "encode", lambda self, o: calls.append("encode") or real_encode(self, o))
    monkeypatch.setattr(json, "dumps", lambda *a, **k: calls.append("dumps") or real_dumps(*a, **k))
    observations = [{"measure": "GROUNDING", "case_version": f"cv-{i}", "repetition": "1", "stage": "report",
                     "subject": f"e{i}", "result": "FAILED", "reason": "evidence", "detail": f"finding f{i}"} for i in range(2000)]
    cases = [{"case_version": f"cv-{i}", "repetition": 1, "state": "PASS", "measures": {"GROUNDING": [1, 1]}} for i in range(2000)]
    value = {"format": "sitegen.results/1", "runs": [{"run": "r", "cases": cases, "observations": observations}]}
    lines = canonical_json(value).count(b"\n")
    assert lines > 8000
    assert len(calls) <= 4, f"{len(calls)} encoder calls for {lines} lines"


def test_score_all_serializes_the_record_once_when_every_run_reproduces(tmp_path, monkeypatch, capsys):
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    before = (root / "results.json").read_bytes()
    laid_out = []  # each run's entry laid out: once, where it is scored (its print), and never again to compare or write
    real = results_module._entry_pieces
    monkeypatch.setattr(results_module, "_entry_pieces", lambda result, before: laid_out.append(result.run) or real(result, before))
    assert main(["score", "--all", "--records", str(root)]) == 0
    capsys.readouterr()
    assert (root / "results.json").read_bytes() == before
    runs = [run["run"] for run in json.loads(before)["runs"]]
    assert sorted(laid_out) == runs, f"entries laid out: {laid_out}, for the record's runs {runs}"


def test_score_all_still_writes_a_run_it_adds(tmp_path, capsys):
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    full = (root / "results.json").read_bytes()
    record = json.loads(full)
    dropped = record["runs"].pop()["run"]
    (root / "results.json").write_bytes(canonical_json(record))
    assert main(["score", "--all", "--records", str(root)]) == 0
    assert f"{dropped}: " in capsys.readouterr().out
    assert (root / "results.json").read_bytes() == full
    assert load_records(root).results_json == full


def test_score_all_reads_no_record_whose_bytes_are_the_fresh_results(tmp_path, monkeypatch, capsys):
    # canonical bytes are the proof: a record equal to the fresh results' bytes, sealed with today's inputs, reproduces with
    # nothing to parse or compare
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    read = []
    monkeypatch.setattr(verify, "read_results", lambda *a, **k: read.append(1) or read_results(*a, **k))
    assert main(["score", "--all", "--records", str(root)]) == 0
    out = capsys.readouterr().out
    assert read == []
    assert out.count("(reproduces the record; sealed)") == len(json.loads((root / "results.json").read_bytes())["runs"])


def test_score_all_still_refuses_a_reformatted_record_with_its_place(tmp_path, capsys):
    root = tmp_path / "records"
    shutil.copytree(RECORDS, root)
    data = (root / "results.json").read_bytes()
    (root / "results.json").write_bytes(data.replace(b'"format": "sitegen.results/1"', b'"format":  "sitegen.results/1"', 1))
    assert main(["score", "--all", "--records", str(root)]) == 2
    err = capsys.readouterr().err
    assert "[results.not-canonical]" in err and f"{root / 'results.json'}:2:" in err


def test_the_record_written_run_by_run_is_the_canonical_json_of_the_whole():
    results = read_results((RECORDS / "results.json").read_bytes())
    for chosen in (dict(results), {k: results[k] for k in list(results)[:1]}, {}):
        whole = {"format": FORMAT, "runs": [result_to_json(chosen[k]) for k in sorted(chosen)]}
        assert write_results(chosen) == canonical_json(whole) == reference_canonical_json(whole)


class _Tracked(dict):
    """A run's JSON tree that can be watched for being freed."""


def test_the_record_is_written_with_one_run_tree_alive_at_a_time(monkeypatch):
    alive: list[weakref.ref] = []
    most = [0]
    real = results_module.result_to_json

    def tracked(result):
        most[0] = max(most[0], sum(1 for ref in alive if ref() is not None))
        tree = _Tracked(real(result))
        alive.append(weakref.ref(tree))
        return tree

    monkeypatch.setattr(results_module, "result_to_json", tracked)
    results = read_results((RECORDS / "results.json").read_bytes())
    data = write_results(results)
    assert len(results) > 2 and len(alive) <= len(results)  # an entry laid out from its fields makes no tree at all
    assert most[0] == 0, f"{most[0]} earlier runs' trees were still alive when the next was made"
    assert data == (RECORDS / "results.json").read_bytes()


# --- the results writer that lists an entry's texts and values (score/entrywriter.py) against the per-value writer ---

COUNT = st.one_of(st.integers(min_value=0, max_value=50), st.integers(min_value=-(10 ** 30), max_value=10 ** 30))
DIGESTS = st.dictionaries(TEXT, TEXT, max_size=4)
SEALS = st.builds(m.Seal, run=DIGESTS, setup_fingerprint=TEXT, case_versions=st.dictionaries(TEXT, DIGESTS, max_size=4),
                  pairs=DIGESTS, answers=st.dictionaries(TEXT, DIGESTS, max_size=4))


def run_results(scalar, count, pair):
    """Run results whose fields are drawn from `scalar` and `count`, and each case's measure a `pair`."""
    measures = st.builds(m.MeasureResult, scalar, scalar, count, count, count, count, count)
    cases = st.builds(m.CaseResult, scalar, count, scalar, st.dictionaries(TEXT, pair, max_size=4))
    observations = st.builds(m.Observation, scalar, scalar, scalar, scalar, scalar, scalar, scalar, scalar)
    return st.builds(m.RunResult, scalar, count, scalar, scalar, st.lists(measures, max_size=3).map(tuple),
                     st.lists(cases, max_size=6).map(tuple), st.lists(observations, max_size=6).map(tuple),
                     st.one_of(st.none(), SEALS))


AS_RECORDED = run_results(TEXT, COUNT, st.tuples(COUNT, COUNT))
# what the record never holds (other types, pairs of other lengths or kinds): the writer must still give the same bytes
UNFORESEEN = run_results(SCALARS, SCALARS, st.one_of(st.tuples(SCALARS, SCALARS), st.lists(SCALARS, max_size=3),
                                                     st.tuples(SCALARS)))


def reference_results(results: dict) -> bytes:
    return reference_canonical_json({"format": FORMAT, "runs": [result_to_json(results[k]) for k in sorted(results)]})


@settings(max_examples=150, deadline=None)
@given(st.lists(AS_RECORDED, max_size=3))
def test_the_results_writer_gives_the_bytes_of_the_per_value_writer(runs):
    results = {f"run-{index}": result for index, result in enumerate(runs)}
    assert write_results(results) == reference_results(results)


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(AS_RECORDED, UNFORESEEN), max_size=3), st.integers(min_value=1, max_value=12))
def test_the_results_writer_gives_the_same_bytes_whatever_its_segments(runs, segment):
    # an entry is written out a segment of values at a time: every boundary, inside a case, an observation or between
    # them, must join to the same bytes
    results = {f"run-{index}": result for index, result in enumerate(runs)}
    with mock.patch.object(entrywriter, "SEGMENT", segment):
        assert write_results(results) == reference_results(results)
        assert writes_as(results, reference_results(results))
        assert not writes_as(results, reference_results(results) + b" ")


def _printed(results: dict) -> ResultSpool:
    """The results packed with each entry's print, as a scoring pass keeps them where a record is to be checked."""
    spool = ResultSpool()
    for run_id, result in results.items():
        spool.add(result)
        spool.add_print(run_id, entry_print(result))
    return spool


@settings(max_examples=100, deadline=None)
@given(st.lists(st.one_of(AS_RECORDED, UNFORESEEN), min_size=1, max_size=3), st.data())
def test_a_record_checked_by_its_entries_prints_is_accepted_exactly_when_its_bytes_are_written_again(runs, data):
    results = {f"run-{index}": dataclasses.replace(result, run=f"run-{index}") for index, result in enumerate(runs)}
    spool, written = _printed(results), reference_results(results)
    assert all(type(spool.printed(r)) is EntryPrint for r in results)
    assert writes_as(spool, written)
    assert not writes_as(spool, written + b" ") and not writes_as(spool, written[:-1])
    at = data.draw(st.integers(min_value=0, max_value=len(written) - 1))
    changed = written[:at] + bytes([written[at] ^ 1]) + written[at + 1:]
    assert not writes_as(spool, changed)
    assert writes_as(spool, changed) == writes_as(dict(results), changed)  # the same answer as laying every entry out


@settings(max_examples=20, deadline=None)
@given(AS_RECORDED)
def test_a_spool_without_every_entrys_print_is_checked_by_laying_its_entries_out(result):
    result = dataclasses.replace(result, run="run-1")
    results = {"run-1": result}
    spool = _printed(results)
    spool.add(result)  # packed again: the print taken before no longer holds for it
    assert spool.printed("run-1") is None
    assert writes_as(spool, write_results(results)) and not writes_as(spool, write_results(results) + b" ")


@settings(max_examples=100, deadline=None)
@given(st.lists(UNFORESEEN, min_size=1, max_size=2))
def test_the_results_writer_gives_the_same_bytes_for_values_the_record_never_holds(runs):
    results = {f"run-{index}": result for index, result in enumerate(runs)}
    assert write_results(results) == reference_results(results)


def _one_run(**changes) -> dict:
    results = read_results((RECORDS / "results.json").read_bytes())
    first = next(iter(results))
    return {first: dataclasses.replace(results[first], **changes)}


def test_the_results_writer_refuses_what_the_per_value_writer_refuses():
    # a lone surrogate is no character (the loader refuses one), a number of more than 4,300 digits is refused by Python:
    # both writers fail alike rather than write something else
    for changes, error in (({"outcome": "\ud800"}, UnicodeEncodeError), ({"scorer_version": 10 ** 5000}, ValueError)):
        results = _one_run(**changes)
        for writer in (write_results, reference_results):
            try:
                writer(results)
            except error:
                continue
            raise AssertionError(f"{writer.__name__} wrote {changes}")


def test_the_results_writer_takes_no_python_step_per_case_or_observation():
    # "as fast as C json.dumps": the Python calls made while writing must not grow with the cases and observations
    def record(size: int) -> dict:
        cases = tuple(m.CaseResult(f"cv-{i}", 1 + i % 3, "PASS", {"GROUNDING": (1, 1), "QUOTE_FIDELITY": (i, 2)})
                      for i in range(size))
        observations = tuple(m.Observation("GROUNDING", f"cv-{i}", "1", "report", f"e{i}", "failed", "evidence", f"f{i}")
                             for i in range(size))
        seal = m.Seal({"date": "d"}, "fp", {f"cv-{i}": {"document": "a", "key": "b", "rules": "c"} for i in range(size)},
                      {}, {f"cv-{i}": {"1": "x", "2": "y"} for i in range(size)})
        measures = (m.MeasureResult("GROUNDING", "BLOCK", 1, 2, 1, 0, 0),)
        return {"run-1": m.RunResult("run-1", 7, "method", "BLOCK", measures, cases, observations, seal)}

    def python_calls(results: dict) -> int:
        count = [0]

        def profile(frame, event, arg):  # sitegen's own functions (not the collector's callbacks of the test tools)
            if event == "call" and frame.f_code.co_filename.startswith(SITEGEN):
                count[0] += 1

        sys.setprofile(profile)
        try:
            write_results(results)
        finally:
            sys.setprofile(None)
        return count[0]

    small, large = record(10), record(3000)
    assert write_results(large) == reference_results(large)
    assert python_calls(large) <= python_calls(small) + 5, (python_calls(small), python_calls(large))


def test_a_difference_is_shown_from_where_two_texts_part_with_the_line_numbers_of_the_whole():
    # a record's lines are only compared around where it parts from the other: a few of them, numbered in the whole text
    old = "".join(f"line {i}\n" for i in range(1, 100_001)).encode()
    new = old.replace(b"line 70000\n", b"line 70000 changed\n")
    assert difference_shown(old, new, "as it is", "as written", context=1).splitlines() == [
        "--- as it is", "+++ as written", "@@ -69999,3 +69999,3 @@", " line 69999", "-line 70000", "+line 70000 changed",
        " line 70001"]
    # a text that ends early: the rest of the other is what differs
    assert difference_shown(b"a\nb\n", b"a\nb\nc\n", "old", "new").splitlines() == [
        "--- old", "+++ new", "@@ -2 +2,2 @@", " b", "+c"]
