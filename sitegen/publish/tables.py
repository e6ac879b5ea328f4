"""The results as CSV for spreadsheets and scripts, with a metadata file that says what every column holds, in every language."""

from __future__ import annotations

import csv
import io
from dataclasses import dataclass
from typing import Iterable, Sequence

from sitegen.core import model as m
from sitegen.load.spool import release
from sitegen.publish.exportcache import CaseRowsKept
from sitegen.publish.exportcontext import ExportContext, json_bytes
from sitegen.score.measures.base import N_
from sitegen.score.measures.registry import MEASURES, TITLES

CASE_TABLE = "case-results.csv"
METADATA = "tables.metadata.json"
# A spreadsheet program runs a cell that starts with one of these as a formula (CSV injection); such a text cell gets a
# leading apostrophe, which those programs show as text and hide. No value sitegen writes as a number starts with one.
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
COUNTS = "observations"  # the unit of every count column


def measure_table(measure: str) -> str:
    """The file of one measure across the published runs."""
    return f"measure-{measure}.csv"


@dataclass(frozen=True)
class Column:
    """One column of a table: its header, what it means (English msgids), its unit, and the file its values come from."""

    name: str
    title: str
    description: str
    unit: str | None = None
    source: str = "results"  # results: the published results record; runs: the run pages (the runs' metadata)
    measure: str | None = None  # the measure whose title fills %(measure)s in the texts


RUN_COLUMNS = (
    Column("run", N_("Run"), N_("The run's identifier, as on the run's page and in the results file."), source="runs"),
    Column("date", N_("Date"), N_("The day the run was made (ISO 8601, YYYY-MM-DD)."), source="runs"),
    Column("engine_version", N_("Engine version"), N_("The version of the engine under test, as its makers name it."), source="runs"),
    Column("setup", N_("Setup"), N_("The run setup the run used; its page gives the configuration's fingerprint."), source="runs"),
    Column("suite", N_("Test suite"), N_("The test suite the run was scored against."), source="runs"),
    Column("suite_version", N_("Suite version"), N_("The version of the test suite."), source="runs"),
    Column("scorer_version", N_("Scorer version"), N_("The version of the scorer that scored the run; every run stays scored by its own."),
           source="runs"),
)
STATE_TEXT = N_("The measure's result in the run: PASS, BLOCK, PENDING_CONFIRMATION, NOT_OBSERVED (nothing to count) or "
                "CRASHED (the run did not finish, so it says nothing either way).")
WORD_TEXT = N_("A whole number, or the word NOT_OBSERVED or CRASHED when the measure has nothing to count or the run crashed; "
               "never a number or an empty cell in their place.")
MEASURE_COLUMNS = (
    Column("state", N_("Result"), STATE_TEXT),
    Column("passed", N_("Passed"), N_("Observations that passed (a miss dismissed by its rerun counts as passed)."), COUNTS),
    Column("observed", N_("Observed"), N_("Observations made. The measure reads as passed of observed; there is no percentage."), COUNTS),
    Column("failed", N_("Failed"), N_("Observations that failed."), COUNTS),
    Column("pending", N_("Pending"), N_("First misses that wait for a rerun: neither passed nor failed."), COUNTS),
    Column("dismissed", N_("Dismissed by rerun"), N_("First misses that the rerun found, counted among the passed."), COUNTS),
)
CASE_COLUMNS = (
    RUN_COLUMNS[0],
    Column("case_version", N_("Case version"), N_("The case version, as on its case page and in the cases file.")),
    Column("repetition", N_("Repetition"), N_("The repetition of the run, from 1.")),
    Column("state", N_("Result"), N_("The case version's result in this repetition: PASS, BLOCK or PENDING_CONFIRMATION.")),
) + tuple(
    column for measure in MEASURES for column in (
        Column(f"{measure}_passed", N_("%(measure)s: passed"),
               N_("Observations of %(measure)s involving this case in this repetition that passed, or NOT_OBSERVED when it "
                  "took part in none."), COUNTS, measure=measure),
        Column(f"{measure}_observed", N_("%(measure)s: observed"),
               N_("Observations of %(measure)s involving this case in this repetition, or NOT_OBSERVED when it took part in none."),
               COUNTS, measure=measure),
    )
)


def cell(value: object) -> str:
    """A value as a CSV cell: numbers as digits, text made safe for spreadsheet programs (see FORMULA_STARTS)."""
    if isinstance(value, bool):
        raise TypeError("a table holds no booleans")
    if isinstance(value, int):
        return str(value)
    text = str(value)
    return "'" + text if text.startswith(FORMULA_STARTS) else text


def csv_bytes(header: Sequence[str], rows: Iterable[Sequence[object]]) -> bytes:
    """RFC 4180: a header row, CRLF line ends, a field quoted when it holds a comma, a quote or a line break; UTF-8."""
    return csv_rows([header]) + csv_rows(rows)


def csv_rows(rows: Iterable[Sequence[object]]) -> bytes:
    """Rows of csv_bytes without the header: a table's rows written apart and joined are the table's bytes."""
    out = io.StringIO(newline="")
    writer = csv.writer(out, dialect="excel", lineterminator="\r\n", quoting=csv.QUOTE_MINIMAL)
    for row in rows:
        writer.writerow([cell(value) for value in row])
    return out.getvalue().encode("utf-8")


def _run_cells(run: m.Run) -> list[object]:
    return [run.id, run.date, run.engine_version, run.setup, run.suite, run.suite_version, run.scorer_version]


def measure_rows(context: ExportContext, measure: str) -> list[list[object]]:
    """One row per published run: the state and the counts, or the state's word in place of every count."""
    rows = []
    for run in context.runs:
        result = context.summaries[run.id]
        found = next((x for x in result.measures if x.measure == measure), None)
        if result.outcome == m.CRASHED_STATE:
            rows.append(_run_cells(run) + [m.CRASHED_STATE] * len(MEASURE_COLUMNS))
        elif found is None or found.state == m.NOT_OBSERVED:
            rows.append(_run_cells(run) + [m.NOT_OBSERVED] * len(MEASURE_COLUMNS))
        else:
            rows.append(_run_cells(run) + [found.state, found.passed, found.observed, found.failed, found.pending, found.dismissed])
    return rows


def run_case_rows(context: ExportContext, run: m.Run) -> Iterable[list[object]]:
    """The case table's rows of one run: one per case version and repetition (a crashed run has no case results). The
    table is made run by run, so the run's result is let go at once (the rows below hold it while they are made)."""
    result = context.results[run.id]
    release(context.results, run.id)
    for case in sorted(result.cases, key=lambda c: (c.case_version, c.repetition)):
        counts: list[object] = []
        for measure in MEASURES:
            counted = case.measures.get(measure)
            counts.extend(counted if counted is not None else (m.NOT_OBSERVED, m.NOT_OBSERVED))
        yield [run.id, case.case_version, case.repetition, case.state, *counts]


def case_table(context: ExportContext, kept: CaseRowsKept | None = None) -> bytes:
    """The case table; with `kept`, a run's rows written before from the same result are taken from it (results in a
    ResultSpool only: the digest of a run's result is its key)."""
    header = csv_rows([[c.name for c in CASE_COLUMNS]])
    digest = getattr(context.results, "digest", None) if kept is not None else None
    parts = [header]  # written a run at a time: at 10,000 case versions the whole table written at once took ~190 MiB
    for run in context.runs:
        if digest is None:
            parts.append(csv_rows(run_case_rows(context, run)))
            continue
        key = kept.key(run.id, digest(run.id))
        rows = kept.get(key, csv_rows([[run.id]])[:-2])
        if rows is None:
            rows = csv_rows(run_case_rows(context, run))
            kept.put(key, rows)
        parts.append(rows)
    return b"".join(parts)


def table_files(context: ExportContext, kept: CaseRowsKept | None = None) -> tuple[tuple[str, bytes], ...]:
    """The measure tables, the case table and their metadata file, as (name under downloads/, bytes); with `kept`, runs'
    case-table rows written before (case_table)."""
    files = [(measure_table(measure), csv_bytes([c.name for c in RUN_COLUMNS + MEASURE_COLUMNS], measure_rows(context, measure)))
             for measure in MEASURES]
    files.append((CASE_TABLE, case_table(context, kept)))
    files.append((METADATA, json_bytes(table_metadata(context))))
    return tuple(files)


def table_metadata(context: ExportContext) -> dict:
    """What each table and each of its columns holds, in every language, where it comes from, and its licence if any."""
    tables = {}
    for measure in MEASURES:
        title = _measure_title(context, measure)
        tables[measure_table(measure)] = {
            "title": context.texts(N_("%(measure)s in every published run"), measure=measure),
            "description": {lang: context.catalogs[lang].gettext(
                N_("The measure %(measure)s (%(title)s): its result and counts in every published run, one row per run, "
                   "oldest first.")) % {"measure": measure, "title": title[lang]} for lang in context.languages},
            "method": {lang: context.url(f"{lang}/method.html#{measure.lower()}") for lang in context.languages},
            "columns": _columns(context, RUN_COLUMNS + MEASURE_COLUMNS),
        }
    tables[CASE_TABLE] = {
        "title": context.texts(N_("Every case version's result in every repetition")),
        "description": context.texts(N_("One row per case version and repetition of every published run that finished, oldest "
                                        "run first; a crashed run has no case results, and its measures read CRASHED in the "
                                        "measure tables.")),
        "method": {lang: context.url(f"{lang}/method.html#measures") for lang in context.languages},
        "columns": _columns(context, CASE_COLUMNS),
    }
    document = {
        "title": dict(context.records.config.title),
        "description": context.texts(N_("Tables of the published results: UTF-8, a header row, fields separated by commas and "
                                        "quoted as RFC 4180 says. A text cell that would begin with =, +, -, @, a tab or a "
                                        "carriage return begins with an apostrophe (') so that spreadsheet programs show it "
                                        "as text instead of running it; remove that one character to get the value as "
                                        "recorded.")),
        "url": context.url(""),
        "date": context.date,
        "tables": tables,
    }
    if context.records.config.license is not None:
        document["license"] = dict(context.records.config.license)
    return document


def _measure_title(context: ExportContext, measure: str) -> dict[str, str]:
    return context.texts(TITLES[measure])


def _columns(context: ExportContext, columns: Sequence[Column]) -> list[dict]:
    """Every column in the table's order (a list: JSON objects have none)."""
    results = context.download_named("results.json")
    sources = {
        "results": {"file": results, "url": context.url(f"downloads/{results}")} if results else {"url": context.url("")},
        "runs": {"url": context.url("")},
    }
    described = []
    for column in columns:
        entry = {
            "name": column.name,
            "title": column_text(context, column.title, column.measure),
            "description": column_text(context, column.description, column.measure),
            "unit": column.unit,
            "source": sources[column.source],
        }
        if context.records.config.license is not None:
            entry["license"] = dict(context.records.config.license)
        described.append(entry)
    return described


def column_text(context: ExportContext, msgid: str, measure: str | None) -> dict[str, str]:
    """A column's text in every language; a measure's own columns name it by its title there and by its id."""
    if measure is None:
        return context.texts(msgid)
    titles = _measure_title(context, measure)
    return {lang: context.catalogs[lang].gettext(msgid) % {"measure": f"{titles[lang]} ({measure})"} for lang in context.languages}
