"""The load phase every command starts with: records loaded and checked, the results record's own problems in the same run."""

from __future__ import annotations

from pathlib import Path

from sitegen.core import model as m
from sitegen.core.collector import collector_paused, frozen_when_made
from sitegen.core.errors import Diagnostic, PublicationError, RecordsError
from sitegen.core.files import read_regular
from sitegen.load.answercache import CheckedAnswers
from sitegen.load.records import load_records
from sitegen.load.spool import ResultSpool
from sitegen.score.recordcache import RecordEntries, read_by_entry
from sitegen.score.results import read_results


def load_phase(records_dir: Path, *, jobs: int = 1, cache: CheckedAnswers | None = None) -> m.Records:
    """Load and validate the records (with `cache`, answers files checked before are taken as kept); when they do not
    load, the results record's own problems come in the same run.

    The loaded records live as long as the process: made with the collector paused, then frozen out of its sight,
    and so is every run unpacked later (the pages read them many times).
    """
    try:
        with frozen_when_made():
            return load_records(Path(records_dir), jobs=jobs, unpacking=frozen_when_made, answers_cache=cache)
    except RecordsError as exc:
        raise RecordsError(exc.diagnostics + _results_problems(Path(records_dir))) from None


def recorded_phase(records: m.Records, records_dir: Path, cache: RecordEntries | None = None) -> ResultSpool:
    """The results record, read and schema-checked (a missing one is a problem: `sitegen score --all` writes it); with
    `cache`, only the entries not read before."""
    if "results.json" not in records.files:
        raise PublicationError([Diagnostic(str(Path(records_dir) / "results.json"), None, None, None,
                                           "no results record; run `sitegen score --all` first", "results.missing")])
    with collector_paused():
        path = str(Path(records_dir) / "results.json")
        return read_by_entry(records.results_json, path=path, unpacking=frozen_when_made, kept=cache)


def _results_problems(records_dir: Path) -> tuple[Diagnostic, ...]:
    """What is wrong with the results record in itself (JSON, schema), so that records that do not load are no reason to
    leave it for another run; verifying it against a fresh scoring waits until they load."""
    try:
        data = read_regular(records_dir / "results.json")
    except OSError:
        return ()
    try:
        with collector_paused():
            read_results(data, path=str(records_dir / "results.json"))
    except RecordsError as exc:
        return exc.diagnostics
    return ()
