"""The publication log: each sealed publication names its SHA256SUMS, its runs' results and the entry before it, so none can
be changed or dropped later without breaking a chain any reader who kept one digest can follow."""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from typing import Mapping

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic
from sitegen.load.jsonread import escape_pointer, parse_json
from sitegen.load.schemabasics import is_calendar_date
from sitegen.score.results import result_to_json
from sitegen.score.seals import digest

LOG = "publications.jsonl"  # in the records folder and in downloads/
FOLDER = "publications"  # beside it: every SHA256SUMS a log entry names, as <its SHA-256>.SHA256SUMS
SUFFIX = ".SHA256SUMS"
FORMAT = "sitegen.publication/1"
FIELDS = ("date", "format", "previous", "results", "sequence", "sha256sums")
_HEX = re.compile("^[0-9a-f]{64}$")


@dataclass(frozen=True)
class LogEntry:
    """One sealed publication, with the SHA-256 of its own line (newline included): what the next entry's `previous` is."""

    line: int
    sequence: int
    date: str
    previous: str | None
    sha256sums: str
    results: Mapping[str, str]  # run id -> digest of its results entry
    digest: str
    columns: Mapping[str, int] = field(default_factory=dict)  # pointer (/previous, /results/RUN, ...) -> its column

    def at(self, path: str, pointer: str, message: str, code: str) -> Diagnostic:
        return Diagnostic(path, self.line, self.columns.get(pointer), pointer, message, code)


def entry_line(*, sequence: int, date: str, previous: str | None, sha256sums: str, results: Mapping[str, str]) -> bytes:
    """One log line: sorted keys, no spaces, UTF-8, a final newline (the bytes its digest is taken of)."""
    value = {"date": date, "format": FORMAT, "previous": previous, "results": dict(sorted(results.items())),
             "sequence": sequence, "sha256sums": sha256sums}
    return (json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")


def result_digest(result: m.RunResult) -> str:
    """The digest a log entry records of one run's results entry: SHA-256 of its canonical JSON (sorted keys, no spaces)."""
    return digest(result_to_json(result))


def parse_log(data: bytes, *, path: str = LOG) -> tuple[tuple[LogEntry, ...], list[Diagnostic]]:
    """Every entry of the log, and a located problem for each line that is not an entry of this format."""
    entries: list[LogEntry] = []
    problems: list[Diagnostic] = []
    if data and not data.endswith(b"\n"):
        problems.append(Diagnostic(path, data.count(b"\n") + 1, None, None, "the log's last line has no newline",
                                   "publication.format"))
    for number, raw in enumerate(data.splitlines(keepends=True), 1):
        doc, found = parse_json(f"{path}:{number}", raw)
        if found:
            problems.extend(Diagnostic(path, number, d.column, d.pointer, d.message, d.code) for d in found)
            continue
        value = doc.value

        def bad(pointer: str, message: str) -> None:
            problems.append(Diagnostic(path, number, doc.position(pointer)[1], pointer, message, "publication.format"))

        if not isinstance(value, dict) or set(value) != set(FIELDS):
            bad("", f"a log entry is an object with exactly the fields {', '.join(FIELDS)}")
            continue
        checks = (("/format", value["format"] == FORMAT, f'format must be "{FORMAT}"'),
                  ("/sequence", type(value["sequence"]) is int and value["sequence"] >= 1, "sequence must be a whole number from 1"),
                  ("/date", isinstance(value["date"], str) and is_calendar_date(value["date"]), "date must be an ISO date (YYYY-MM-DD)"),
                  ("/previous", value["previous"] is None or _hex(value["previous"]), "previous must be null or a SHA-256 in hex"),
                  ("/sha256sums", _hex(value["sha256sums"]), "sha256sums must be a SHA-256 in hex"),
                  ("/results", isinstance(value["results"], dict) and all(isinstance(k, str) and _hex(v) for k, v in value["results"].items()),
                   "results must map run ids to SHA-256 digests in hex"))
        wrong = [(pointer, message) for pointer, ok, message in checks if not ok]
        for pointer, message in wrong:
            bad(pointer, message)
        if wrong:
            continue
        pointers = [f"/{name}" for name in FIELDS] + [f"/results/{escape_pointer(run)}" for run in value["results"]]
        entries.append(LogEntry(number, value["sequence"], value["date"], value["previous"], value["sha256sums"],
                                dict(value["results"]), hashlib.sha256(raw).hexdigest(),
                                {pointer: doc.position(pointer)[1] for pointer in pointers}))
        if raw != entry_line(sequence=value["sequence"], date=value["date"], previous=value["previous"],
                             sha256sums=value["sha256sums"], results=value["results"]):
            problems.append(Diagnostic(path, number, 1, None, "a log entry is written in canonical JSON (sorted keys, no spaces, "
                                       "one line): this one was rewritten, so its digest changed", "publication.format"))
    return tuple(entries), problems


def _hex(value: object) -> bool:
    return isinstance(value, str) and bool(_HEX.match(value))


def check_log_chain(log: bytes, sums_by_digest: Mapping[str, bytes], *, path: str = LOG,
                    folder: str = FOLDER) -> list[Diagnostic]:
    """No problems when every entry follows the one before it (sequence, date, digest) and names a SHA256SUMS that is there.

    Works from published bytes alone: the log and the past SHA256SUMS files by the digest in their names.
    """
    entries, problems = parse_log(log, path=path)
    if problems:
        return problems
    before: LogEntry | None = None
    for entry in entries:
        def at(pointer: str, message: str, code: str = "publication.chain-broken") -> None:
            problems.append(entry.at(path, pointer, message, code))

        expected = 1 if before is None else before.sequence + 1
        if entry.sequence != expected:
            at("/sequence", f"entry {entry.sequence} stands where entry {expected} belongs: an entry was removed or inserted")
        wanted = None if before is None else before.digest
        if entry.previous != wanted:
            at("/previous", "the first entry has no previous entry (null)" if before is None else
               f"previous is {entry.previous}, but the entry before it (line {before.line}) has the SHA-256 {before.digest}: "
               "the earlier entry was changed, or this one does not follow it")
        if before is not None and entry.date < before.date:
            at("/date", f"dated {entry.date}, before the entry it follows ({before.date})")
        sums = sums_by_digest.get(entry.sha256sums)
        name = f"{folder}/{entry.sha256sums}{SUFFIX}"
        if sums is None:
            at("/sha256sums", f"the SHA256SUMS this entry names is missing: {name}", "publication.sums-missing")
        elif hashlib.sha256(sums).hexdigest() != entry.sha256sums:
            problems.append(Diagnostic(name, None, None, None, "this stored SHA256SUMS does not have the SHA-256 its name and "
                                       f"log entry {entry.sequence} give: it was changed", "publication.sums-changed"))
        before = entry
    return problems


def check_log_results(log: bytes, current: Mapping[str, str], *, path: str = LOG,
                      results_path: str = "results.json") -> list[Diagnostic]:
    """No problems when every run a sealed publication contained is still in the results, with the same entry.

    `current` maps each run of the results record to result_digest of its entry. Dropped runs are placed at the log
    entry that last contained them; changed ones are named with every publication that holds another entry for them.
    """
    entries, problems = parse_log(log, path=path)
    if problems:
        return problems
    last: dict[str, LogEntry] = {}
    for entry in entries:
        for run_id in entry.results:
            last[run_id] = entry
    for run_id, entry in last.items():
        pointer = f"/results/{escape_pointer(run_id)}"
        if run_id not in current:
            problems.append(entry.at(path, pointer, f'run "{run_id}" was in sealed publication '
                                       f"{entry.sequence} ({entry.date}) but is no longer in {results_path}: a published run "
                                       "is never withdrawn silently", "publication.run-dropped"))
            continue
        differing = [e for e in entries if run_id in e.results and e.results[run_id] != current[run_id]]
        if differing:
            names = ", ".join(f"{e.sequence} ({e.date})" for e in differing)
            problems.append(differing[-1].at(path, pointer, f'the results entry of run "{run_id}" in '
                                       f"{results_path} has the SHA-256 {current[run_id]}, not the one sealed publication "
                                       f"{names} recorded: a sealed result is never rewritten", "publication.run-changed"))
    return problems


def stored_name(sums_digest: str) -> str:
    return f"{sums_digest}{SUFFIX}"
