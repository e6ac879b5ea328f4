"""The frozen results record: canonical JSON written only by `sitegen score`, and checked against a fresh scoring."""

from __future__ import annotations

import difflib
import hashlib
import json
from dataclasses import dataclass
from typing import Callable, Mapping

from sitegen.core import model as m
from sitegen.core.collector import collector_paused
from sitegen.core.errors import Diagnostic, PublicationError, RecordsError
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
    return {
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
    )


def read_results(data: bytes, *, path: str = "results.json") -> ResultSpool:
    """Parse and schema-check the results record run by run; results keyed by run id, in file order, kept packed."""
    # each run's tree is hundreds of thousands of small objects, alive until packed: a collection would only scan them
    with collector_paused():
        return _read_results(data, path)


def _read_results(data: bytes, path: str) -> ResultSpool:
    doc, problems = read_json_text(path, data)
    if not problems:
        data = None  # the decoded text is all the reading needs; the bytes need not stay alive beside it
        results = ResultSpool()
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
    results = ResultSpool()
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
    """None when the fresh scoring reproduces the record byte for byte."""
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


class ResultsVerifier:
    """Checks fresh results one run at a time where they are scored, so none has to be kept or sent; `finish` raises."""

    def __init__(self, records: m.Records, recorded: Mapping[str, m.RunResult]):
        self.records = records
        self.recorded = recorded
        self.differences: dict[str, Difference | None] = {}

    def examine(self, run_id: str, result: m.RunResult) -> tuple[bool, Difference | None]:
        """(whether the record has this run scored with the same scorer version, and if so where it differs)."""
        recorded = self.recorded.get(run_id)
        if recorded is None or recorded.scorer_version != result.scorer_version:
            return False, None
        return True, compare_result(recorded, result)

    def note(self, run_id: str, examined: tuple[bool, Difference | None]) -> None:
        comparable, difference = examined
        if comparable:
            self.differences[run_id] = difference

    def finish(self) -> None:
        _raise_problems(self.records, self.recorded, self.differences)


def verify_results(records: m.Records, recorded: Mapping[str, m.RunResult], fresh: Mapping[str, m.RunResult]) -> None:
    """Every published run must be in the record, and its fresh scoring (with its own scorer version) must reproduce it."""
    differences = {run_id: compare_result(recorded[run_id], result) for run_id, result in fresh.items()
                   if run_id in recorded and recorded[run_id].scorer_version == result.scorer_version}
    _raise_problems(records, recorded, differences)


def _locator(records: m.Records) -> Callable[[str | None, str, str], Diagnostic]:
    """A diagnostic placed in the results record by file, line and column of a pointer, as every record problem is."""
    source = records.files.get("results.json")
    path = source.path if source else "results.json"
    parsed: list = []  # the record is parsed again for line numbers only when there is a problem to place

    def at(pointer: str | None, message: str, code: str) -> Diagnostic:
        if pointer is not None and records.results_json is not None:
            if not parsed:
                parsed.append(parse_json(path, records.results_json)[0])
            if parsed[0] is not None:
                return parsed[0].diagnostic(pointer, message, code)
        return Diagnostic(path, None, None, pointer, message, code)

    return at


def _raise_problems(records: m.Records, recorded: Mapping[str, m.RunResult], differences: Mapping[str, Difference | None]) -> None:
    at = _locator(records)
    problems = []
    index = {run_id: i for i, run_id in enumerate(recorded)}
    for run in records.published_runs:
        if run.id not in recorded:
            problems.append(at(None, f"published run {run.id} has no results; run `sitegen score {run.id}`", "results.missing-run"))
            continue
        if recorded[run.id].scorer_version != run.scorer_version:
            problems.append(at(f"/runs/{index[run.id]}/scorer_version",
                               f"run {run.id} was scored with scorer v{recorded[run.id].scorer_version}, but runs.json names "
                               f"v{run.scorer_version}", "results.scorer-version"))
            continue
        difference = differences.get(run.id)
        if difference is not None:
            problems.append(at(f"/runs/{index[run.id]}{difference.pointer}",
                               f"recorded results of run {run.id} differ from a fresh scoring: recorded {difference.recorded}, "
                               f"fresh {difference.fresh}", "results.stale"))
    known = {r.id for r in records.published_runs}
    for run_id in recorded:
        if run_id not in known:
            problems.append(at(f"/runs/{index[run_id]}/run", f"results for {run_id}, which is not a published run in runs.json",
                               "results.unknown-run"))
    if problems:
        raise PublicationError(problems)


@dataclass(frozen=True)
class ScoreReport:
    lines: tuple[str, ...]


def score_runs(records: m.Records, run_ids: tuple[str, ...], *, jobs: int = 1) -> dict[str, m.RunResult]:
    """Score runs one at a time (memory stays flat), in N processes when asked; the result never depends on N."""
    from sitegen.score.scoring import score_run

    if jobs <= 1 or len(run_ids) <= 1:
        return {run_id: score_run(records, run_id) for run_id in run_ids}
    from sitegen.core.workers import ordered_map

    return dict(zip(run_ids, ordered_map(_score_in_worker, run_ids, jobs=jobs, context=records)))


def _score_in_worker(records: m.Records, run_id: str) -> m.RunResult:
    from sitegen.score.scoring import score_run

    return score_run(records, run_id)


def score_into_record(records: m.Records, root, *, run_ids: tuple[str, ...] | None, jobs: int = 1) -> ScoreReport:
    """Add newly scored runs to results.json; a run already there must reproduce byte for byte or nothing is written."""
    from pathlib import Path

    from sitegen.core.errors import UsageError

    known = {r.id: r for r in records.runs}
    if run_ids is None:
        run_ids = tuple(r.id for r in records.published_runs)
    unknown = [r for r in run_ids if r not in known]
    if unknown:
        from sitegen.load.schema import did_you_mean

        raise UsageError("unknown run(s): " + ", ".join(f'"{r}"{did_you_mean(r, known)}' for r in unknown))
    source = records.files.get("results.json")
    recorded = read_results(source.data) if source is not None else {}
    fresh = score_runs(records, tuple(run_ids), jobs=jobs)
    lines: list[str] = []
    problems: list[Diagnostic] = []
    updated = dict(recorded)
    at = _locator(records)
    index = {run_id: i for i, run_id in enumerate(recorded)}
    for run_id in run_ids:
        run, result = known[run_id], fresh[run_id]
        summary = _summary(result)
        if not run.published:
            lines.append(f"{run_id}: {summary} (not published: not written to results.json)")
            continue
        if run_id in recorded:
            difference = compare_result(recorded[run_id], result)
            if difference is not None:
                problems.append(at(f"/runs/{index[run_id]}{difference.pointer}",
                                   f"scoring run {run_id} again does not reproduce its recorded results; nothing was written\n"
                                   + difference.diff.rstrip("\n"), "results.stale"))
                continue
            lines.append(f"{run_id}: {summary} (reproduces the record)")
        else:
            updated[run_id] = result
            lines.append(f"{run_id}: {summary} (added)")
    if source is not None and (reformatted := _reformatted(source.path, source.data, write_results(recorded))) is not None:
        problems.append(reformatted)
    if problems:
        raise PublicationError(problems)
    data = write_results(updated)
    target = Path(root) / "results.json"
    if source is None or source.sha256 != hashlib.sha256(data).hexdigest():
        temporary = target.with_name(".results.json.tmp")
        temporary.write_bytes(data)
        temporary.replace(target)
    return ScoreReport(tuple(lines))


def _reformatted(path: str, data: bytes, canonical: bytes) -> Diagnostic | None:
    """A results record holding its values in other bytes than sitegen writes is refused, never silently rewritten or said
    to reproduce: it is published byte for byte, and its checksum would change. Placed at the first difference."""
    if data == canonical:
        return None
    text, wanted = data.decode("utf-8"), canonical.decode("utf-8")
    at = next((i for i, (a, b) in enumerate(zip(text, wanted)) if a != b), min(len(text), len(wanted)))
    line = text.count("\n", 0, at) + 1
    column = at - (text.rfind("\n", 0, at) + 1) + 1
    diff = "".join(list(difflib.unified_diff(text.splitlines(keepends=True), wanted.splitlines(keepends=True),
                                             "results.json (as it is)", "results.json (as sitegen writes it)", n=1))[:40])
    return Diagnostic(path, line, column, None,
                      "results.json holds the recorded results in other bytes than sitegen writes them (reformatted or "
                      "reordered); nothing was written. It is published byte for byte, so restore its bytes (e.g. from "
                      "version control) instead of rewriting it\n" + diff.rstrip("\n"), "results.not-canonical")


def _summary(result: m.RunResult) -> str:
    if result.outcome == m.CRASHED_STATE:
        return "CRASHED (no numbers)"
    parts = [f"{x.measure} {x.passed} of {x.observed}" if x.observed else f"{x.measure} not observed" for x in result.measures]
    return f"{result.outcome}; " + ", ".join(parts)
