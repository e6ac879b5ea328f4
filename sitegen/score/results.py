"""The results record's format: canonical JSON, to and from JSON, reading, writing, and where two results differ."""

from __future__ import annotations

import difflib
import json
from dataclasses import dataclass, replace
from contextlib import nullcontext
from typing import Callable, ContextManager, Mapping

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic, RecordsError
from sitegen.load.jsonread import NotStreamable, parse_json, read_json_text
from sitegen.load.schema import checked_items, validate
from sitegen.load.spool import ResultSpool

FORMAT = "sitegen.results/1"


def canonical_json(value: object) -> bytes:
    """Sorted keys, two-space indent, UTF-8, final newline; an object or array holding only scalars stays on one line.

    One observation per line diffs well in review and keeps a large record a third of the size of one value per line.
    """
    parts: list[str] = []
    _encode(value, "", parts)
    parts.append("\n")
    return "".join(parts).encode("utf-8")


def _scalar(value: object) -> bool:
    return not isinstance(value, (dict, list))


def _encode(value: object, indent: str, out: list[str]) -> None:
    if isinstance(value, dict):
        if not value:
            out.append("{}")
        elif all(_scalar(v) for v in value.values()):
            out.append(json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(", ", ": ")))
        else:
            inner = indent + "  "
            out.append("{")
            for index, key in enumerate(sorted(value)):
                out.append(("," if index else "") + "\n" + inner + json.dumps(key, ensure_ascii=False) + ": ")
                _encode(value[key], inner, out)
            out.append("\n" + indent + "}")
    elif isinstance(value, list):
        if not value:
            out.append("[]")
        elif all(_scalar(v) for v in value):
            out.append(json.dumps(value, ensure_ascii=False, separators=(", ", ": ")))
        else:
            inner = indent + "  "
            out.append("[")
            for index, item in enumerate(value):
                out.append(("," if index else "") + "\n" + inner)
                _encode(item, inner, out)
            out.append("\n" + indent + "]")
    else:
        out.append(json.dumps(value, ensure_ascii=False))


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
    """The whole record, runs sorted by id so the file does not depend on scoring order."""
    return canonical_json({"format": FORMAT, "runs": [result_to_json(results[k]) for k in sorted(results)]})


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
    diff = "".join(difflib.unified_diff(
        canonical_json(old).decode().splitlines(True), canonical_json(new).decode().splitlines(True),
        fromfile=f"recorded {recorded.run}", tofile=f"fresh {fresh.run}", n=2,
    ))
    return Difference(recorded.run, pointer, json.dumps(a, ensure_ascii=False), json.dumps(b, ensure_ascii=False), diff)


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
