"""The results record's format: canonical JSON, to and from JSON, reading, writing, and where two results differ."""

from __future__ import annotations

import difflib
import hashlib
import json
import re
from dataclasses import dataclass, replace
from contextlib import nullcontext
from typing import Callable, ContextManager, Iterator, Mapping, NamedTuple

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic, RecordsError
from sitegen.load.jsonread import NotStreamable, parse_json, read_json_text
from sitegen.load.schema import checked_items, validate
from sitegen.load.spool import ResultSpool
from sitegen.score.entrywriter import PLAIN, encode_one_line, encode_string, laid_out_entry

FORMAT = "sitegen.results/1"


def canonical_json(value: object) -> bytes:
    """Sorted keys, two-space indent, UTF-8, final newline; an object or array holding only scalars stays on one line.

    One observation per line diffs well in review and keeps a large record a third of the size of one value per line.
    Written by C: the walk lays out only the containers that span lines, and every one-line value is encoded in one
    call of the C encoder for all of them (encode_one_line), so the record costs about what one json.dumps of it costs.
    """
    return _laid_out(value, "", "") + b"\n"


def _laid_out(value: object, indent: str, before: str) -> bytes:
    """`before`, then the value laid out as canonical_json does at `indent`, as UTF-8."""
    texts: list[str] = []  # texts[i] is what stands before inline[i]
    inline: list[object] = []
    tail = _layout(value, indent, before, texts, inline, {})
    parts: list[str] = [""] * (2 * len(texts) + 1)
    texts.append(tail)
    parts[0::2] = texts
    parts[1::2] = encode_one_line(inline)
    return "".join(parts).encode("utf-8")


def _inline(value: object) -> bool:
    """A plain list or dict of plain scalars: the C encoder writes it on one line as the record wants it."""
    kind = type(value)
    if kind is list:
        return PLAIN.issuperset(map(type, value))
    if kind is dict:
        return PLAIN.issuperset(map(type, value.values()))
    return False


def _scalar(value: object) -> str:
    kind = type(value)
    if kind is str:
        return encode_string(value)
    if kind is int:
        return int.__repr__(value)
    return json.dumps(value, ensure_ascii=False)


def _layout(value: object, indent: str, carry: str, texts: list[str], inline: list[object], names: dict[str, str]) -> str:
    """Lay out a value at `indent`: returns the text since the last one-line container, to go before the next one.

    `carry` is the text so far since the last one-line container; `names` keeps each key's encoding, since keys repeat.
    """
    if _inline(value):
        texts.append(carry)
        inline.append(value)
        return ""
    if isinstance(value, dict):
        if not any(isinstance(v, (dict, list)) for v in value.values()):  # one line, holding a tuple or another type
            return carry + json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": "))
        inner = indent + "  "
        separator = "{\n" + inner
        for key in sorted(value):
            if type(key) is str:
                name = names.get(key)
                if name is None:
                    name = names[key] = encode_string(key)
            else:
                name = json.dumps(key, ensure_ascii=False)
            carry += separator + name + ": "
            separator = ",\n" + inner
            item = value[key]
            if _inline(item):
                texts.append(carry)
                inline.append(item)
                carry = ""
            elif type(item) in PLAIN:
                carry += _scalar(item)
            else:
                carry = _layout(item, inner, carry, texts, inline, names)
        return carry + "\n" + indent + "}"
    if isinstance(value, list):
        if not any(isinstance(v, (dict, list)) for v in value):
            return carry + json.dumps(value, ensure_ascii=False, separators=(", ", ": "))
        inner = indent + "  "
        separator = "[\n" + inner
        for item in value:
            carry += separator
            separator = ",\n" + inner
            if _inline(item):
                texts.append(carry)
                inline.append(item)
                carry = ""
            elif type(item) in PLAIN:
                carry += _scalar(item)
            else:
                carry = _layout(item, inner, carry, texts, inline, names)
        return carry + "\n" + indent + "]"
    return carry + (_scalar(value) if type(value) in PLAIN else json.dumps(value, ensure_ascii=False))


def result_to_json(result: m.RunResult) -> dict:
    entry = {
        "run": result.run,
        "scorer_version": result.scorer_version,
        "matching_method": result.matching_method,
        "outcome": result.outcome,
        "measures": [
            {"measure": x.measure, "state": x.state, "passed": x.passed, "observed": x.observed,
             "failed": x.failed, "pending": x.pending, "dismissed": x.dismissed}
            for x in result.measures
        ],
        "cases": [
            {"case_version": c.case_version, "repetition": c.repetition, "state": c.state,
             "measures": {k: list(v) for k, v in c.measures.items()}}
            for c in result.cases
        ],
        "observations": [
            {"measure": o.measure, "case_version": o.case_version, "repetition": o.repetition, "stage": o.stage,
             "subject": o.subject, "result": o.result, "reason": o.reason, "detail": o.detail}
            for o in result.observations
        ],
    }
    if result.seal is not None:
        entry["seal"] = seal_to_json(result.seal)
    return entry


def seal_to_json(seal: m.Seal) -> dict:
    return {"run": dict(seal.run), "setup_fingerprint": seal.setup_fingerprint,
            "case_versions": {k: dict(v) for k, v in seal.case_versions.items()}, "pairs": dict(seal.pairs),
            "answers": {k: dict(v) for k, v in seal.answers.items()}}


def seal_from_json(raw: dict) -> m.Seal:
    return m.Seal(run=dict(raw["run"]), setup_fingerprint=raw["setup_fingerprint"],
                  case_versions={k: dict(v) for k, v in raw["case_versions"].items()}, pairs=dict(raw["pairs"]),
                  answers={k: dict(v) for k, v in raw["answers"].items()})


def result_from_json(raw: dict) -> m.RunResult:
    return m.RunResult(
        run=raw["run"],
        scorer_version=raw["scorer_version"],
        matching_method=raw["matching_method"],
        outcome=raw["outcome"],
        measures=tuple(m.MeasureResult(x["measure"], x["state"], x["passed"], x["observed"], x["failed"], x["pending"], x["dismissed"])
                       for x in raw["measures"]),
        cases=tuple(m.CaseResult(c["case_version"], c["repetition"], c["state"], {k: (v[0], v[1]) for k, v in c["measures"].items()})
                    for c in raw["cases"]),
        observations=tuple(m.Observation(o["measure"], o["case_version"], o["repetition"], o["stage"], o["subject"], o["result"],
                                         o["reason"], o["detail"]) for o in raw["observations"]),
        seal=seal_from_json(raw["seal"]) if "seal" in raw else None,
    )


def read_results(data: bytes, *, path: str = "results.json", unpacking: Callable[[], ContextManager] = nullcontext) -> ResultSpool:
    """Parse and schema-check the results record run by run; results keyed by run id, in file order, kept packed.

    Each run's tree is hundreds of thousands of small objects, alive until packed: the caller may pause the collector
    around the call; `unpacking` wraps each later unpacking of a run's results (see core/collector.py).
    """
    return _read_results(data, path, unpacking)


def _read_results(data: bytes, path: str, unpacking: Callable[[], ContextManager]) -> ResultSpool:
    doc, problems = read_json_text(path, data)
    if not problems:
        data = None  # the decoded text is all the reading needs; the bytes need not stay alive beside it
        results = ResultSpool(unpacking=unpacking)
        try:
            for _, raw in checked_items(doc, "results", "runs"):
                if raw["run"] in results:
                    raise NotStreamable()  # the whole-file reading below says where
                results.add(result_from_json(raw))
            return results
        except NotStreamable:
            data = doc.text.encode("utf-8")
    doc, problems = parse_json(path, data)
    if problems:
        raise RecordsError(problems)
    found: list[Diagnostic] = []
    validate("results", doc.value, lambda p, msg, code: found.append(doc.diagnostic(p, msg, code)))
    results = ResultSpool(unpacking=unpacking)
    if not found:
        for index, raw in enumerate(doc.value["runs"]):
            if raw["run"] in results:
                found.append(doc.diagnostic(f"/runs/{index}/run", f'run "{raw["run"]}" appears twice', "results.duplicate-run"))
            results.add(result_from_json(raw))
    if found:
        raise RecordsError(found)
    return results


def write_results(results: Mapping[str, m.RunResult]) -> bytes:
    """The whole record, runs sorted by id so the file does not depend on scoring order.

    The canonical_json of {"format": FORMAT, "runs": [...]}, laid out one run at a time, so only one run's JSON tree is
    alive at once (at 10,000 case versions the whole tree would be several times the size of the record).
    """
    return b"".join(results_pieces(results))


def writes_as(results: Mapping[str, m.RunResult], data: bytes) -> bool:
    """Whether write_results(results) == data, comparing piece by piece, never making the whole record beside `data`.

    When `results` is a ResultSpool holding every run's EntryPrint (taken where each result was made), each entry is
    checked by its length and SHA-256 against its place in `data`, without unpacking or laying out any run again.
    """
    printed = _prints(results)
    if printed is not None:
        return _matches_prints(printed, data)
    at = 0
    for piece in results_pieces(results):
        if not data.startswith(piece, at):  # in place, by memcmp (a memoryview compares byte by byte: 0.08 s for 27 MB)
            return False
        at += len(piece)
    return at == len(data)


_HEAD = f'{{\n  "format": {encode_string(FORMAT)},\n  "runs": ['.encode("utf-8")
_TAIL = b"\n  ]\n}\n"
_FIRST, _NEXT = "\n    ", ",\n    "  # what stands before the first run's entry, and before each further one


def results_pieces(results: Mapping[str, m.RunResult]) -> Iterator[bytes]:
    """write_results' bytes in pieces: a run's entry, or a part of one, at a time."""
    if not results:
        yield canonical_json({"format": FORMAT, "runs": []})
        return
    yield _HEAD
    for index, run_id in enumerate(sorted(results)):
        yield from _entry_pieces(results[run_id], _NEXT if index else _FIRST)
    yield _TAIL


def _entry_pieces(result: m.RunResult, before: str) -> list[bytes]:
    """`before`, then a run's entry as the record lays it out, in pieces to be joined."""
    pieces = laid_out_entry(result, "    ", before)
    return [_laid_out(result_to_json(result), "    ", before)] if pieces is None else pieces


class EntryPrint(NamedTuple):
    """A run's entry as results_pieces writes it, the separator before it left out: its length and SHA-256. Taken
    where the result is made (a forked worker), it lets writes_as check a record without laying the entry out again."""

    length: int
    sha256: bytes


def entry_print(result: m.RunResult) -> EntryPrint:
    """The EntryPrint of a result's entry: its bytes laid out once, measured, and not kept."""
    digest, length = hashlib.sha256(), 0
    for piece in _entry_pieces(result, ""):
        digest.update(piece)
        length += len(piece)
    return EntryPrint(length, digest.digest())


def _prints(results: Mapping[str, m.RunResult]) -> list[EntryPrint] | None:
    """Every run's EntryPrint in the record's order, when a spool holds one for each run (and there is a run)."""
    if not isinstance(results, ResultSpool) or not results:
        return None
    printed = [results.printed(run_id) for run_id in sorted(results)]
    return printed if all(type(p) is EntryPrint for p in printed) else None


def _matches_prints(printed: list[EntryPrint], data: bytes) -> bool:
    """Whether `data` is the record whose entries have these prints: the same texts between the entries as
    results_pieces writes, and at each entry's place bytes of its length and SHA-256."""
    if not data.startswith(_HEAD):
        return False
    at, view = len(_HEAD), memoryview(data)
    for index, (length, sha256) in enumerate(printed):
        separator = (_NEXT if index else _FIRST).encode("utf-8")
        if not data.startswith(separator, at):
            return False
        at += len(separator)
        if at + length > len(data) or hashlib.sha256(view[at:at + length]).digest() != sha256:
            return False
        at += length
    return data.startswith(_TAIL, at) and at + len(_TAIL) == len(data)


@dataclass(frozen=True)
class Difference:
    """Where a recorded result and a fresh scoring first part ways."""

    run: str
    pointer: str
    recorded: str
    fresh: str
    diff: str


def compare_result(recorded: m.RunResult, fresh: m.RunResult) -> Difference | None:
    """None when the fresh scoring reproduces the record byte for byte; seals are checked apart (score/seals.py)."""
    recorded, fresh = replace(recorded, seal=None), replace(fresh, seal=None)
    if recorded == fresh:  # frozen values of fixed types: equal values write equal canonical bytes
        return None
    old, new = result_to_json(recorded), result_to_json(fresh)
    if old == new:
        return None
    pointer, a, b = _first_difference(old, new, "")
    diff = difference_shown(canonical_json(old), canonical_json(new), f"recorded {recorded.run}", f"fresh {fresh.run}", context=2)
    return Difference(recorded.run, pointer, json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False), diff)


def not_canonical(path: str, data: bytes, canonical: bytes) -> Diagnostic:
    """A results record holding its values in other bytes than sitegen writes (`canonical`) is refused, never silently
    rewritten or said to reproduce: it is published byte for byte, and its checksum would change. Placed at the first
    difference, which is shown under it."""
    at = first_byte_apart(data, canonical)
    line_start = data.rfind(b"\n", 0, at) + 1
    return Diagnostic(path, data.count(b"\n", 0, at) + 1, len(data[line_start:at].decode("utf-8", "replace")) + 1, None,
                      "results.json holds the recorded results in other bytes than sitegen writes them (reformatted or "
                      "reordered); nothing was written. It is published byte for byte, so restore its bytes (e.g. from "
                      "version control) instead of rewriting it", "results.not-canonical",
                      detail=difference_shown(data, canonical, "results.json (as it is)", "results.json (as sitegen writes it)"))


_SHOWN_LINES = 15  # lines of each text, from the first that differs, that a difference shown compares
_HUNK = re.compile(r"@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def difference_shown(old: bytes, new: bytes, fromfile: str, tofile: str, *, context: int = 1) -> str:
    """A unified diff of two texts where they first part ways: a few lines of each from there, with their line numbers
    in the whole texts. Only those lines are compared: a whole record diffed line by line takes time and memory
    growing with the square of its lines (a reformatted results record of 1,000 case versions took 15 s)."""
    at = first_byte_apart(old, new)
    start = old.rfind(b"\n", 0, at) + 1  # the texts are the same up to `at`, so their lines start alike until there
    for _ in range(context):
        start = old.rfind(b"\n", 0, max(start - 1, 0)) + 1 if start else 0
    before = old.count(b"\n", 0, start)  # lines above the ones compared
    diff = difflib.unified_diff(_lines_from(old, start, context + _SHOWN_LINES), _lines_from(new, start, context + _SHOWN_LINES),
                                fromfile, tofile, n=context)

    def numbered(hunk: re.Match) -> str:  # a hunk's line numbers as in the whole texts
        return f"@@ -{int(hunk[1]) + before}{hunk[2] or ''} +{int(hunk[3]) + before}{hunk[4] or ''} @@"

    return "".join(_HUNK.sub(numbered, line, count=1) if line.startswith("@@") else line for line in diff).rstrip("\n")


def _lines_from(data: bytes, start: int, count: int) -> list[str]:
    """Up to `count` lines of a text from the offset `start`, a line's start."""
    end = start
    for _ in range(count):
        found = data.find(b"\n", end)
        if found < 0:
            return data[start:].decode("utf-8", "replace").splitlines(True)
        end = found + 1
    return data[start:end].decode("utf-8", "replace").splitlines(True)


def first_byte_apart(a: bytes, b: bytes, step: int = 1 << 16) -> int:
    """The offset of the first byte where two texts differ (or the shorter one's length), compared a block at a time."""
    for block in range(0, min(len(a), len(b)), step):
        x, y = a[block:block + step], b[block:block + step]
        if x != y:
            return block + next((i for i, (p, q) in enumerate(zip(x, y)) if p != q), min(len(x), len(y)))
    return min(len(a), len(b))


def _first_difference(a, b, pointer):
    if isinstance(a, dict) and isinstance(b, dict):
        for key in sorted(set(a) | set(b)):
            if a.get(key) != b.get(key):
                return _first_difference(a.get(key), b.get(key), f"{pointer}/{key}")
    if isinstance(a, list) and isinstance(b, list):
        for index, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{pointer}/{index}")
        if len(a) != len(b):
            return f"{pointer}/{min(len(a), len(b))}", a[len(b):][:1], b[len(a):][:1]
    return pointer, a, b
