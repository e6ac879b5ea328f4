"""The standard exports (CSV, Every Eval Ever, Croissant), made at build time from the verified results, never scored again."""

from __future__ import annotations

from sitegen.core import model as m
from sitegen.core.errors import PublicationError
from sitegen.core.files import InMemoryFile
from sitegen.load.jsonread import parse_json
from sitegen.publish.croissant import CROISSANT, croissant_file
from sitegen.publish.exportcache import CaseRowsKept
from sitegen.publish.everyeval import every_eval_files, every_eval_name
from sitegen.publish.exportcontext import ExportContext
from sitegen.publish.tables import CASE_TABLE, METADATA, measure_table, table_files
from sitegen.score.measures.registry import MEASURES


def export_files(context: ExportContext, kept: CaseRowsKept | None = None) -> tuple[tuple[str, InMemoryFile], ...]:
    """Every export as (name under downloads/, file), sorted by name; the Croissant file describes all the others. With
    `kept` (a cache's), the case table's rows of a run written before are not written again (exportcache.py)."""
    files = table_files(context, kept) + every_eval_files(context)
    files += ((CROISSANT, croissant_file(context, files)),)
    return tuple(sorted(((name, InMemoryFile(data)) for name, data in files), key=lambda item: item[0]))


def export_names(records: m.Records) -> frozenset[str]:
    """The names under downloads/ that the exports of these records take, known before any is made."""
    return frozenset({measure_table(measure) for measure in MEASURES} | {CASE_TABLE, METADATA, CROISSANT}
                     | {every_eval_name(run) for run in records.published_runs})


def check_export_names(records: m.Records) -> None:
    """A records file may not be published under a name an export takes: refused at its name in sitegen.json."""
    names = export_names(records)
    taken = [(index, published.name) for index, published in enumerate(records.config.publish) if published.name in names]
    if not taken:
        return
    config = records.files["sitegen.json"]
    doc, problems = parse_json(config.path, config.data)
    if problems:
        raise PublicationError(problems)
    raise PublicationError([doc.diagnostic(f"/publish/{index}/name", f'"{name}" is the name of a standard export the build '
                                           "writes into the downloads; publish this file under another name", "publish.name-taken")
                            for index, name in taken])
