"""The standard exports (CSV, Every Eval Ever, Croissant), made at build time from the verified results, never scored again."""

from __future__ import annotations

from sitegen.core import model as m
from sitegen.core.errors import PublicationError
from sitegen.core.files import InMemoryFile
from sitegen.load.jsonread import parse_json
from sitegen.load.publications import ALLOWED_SIGNERS
from sitegen.publish.chain import FOLDER as LOG_FOLDER
from sitegen.publish.chain import LOG
from sitegen.publish.croissant import CROISSANT, croissant_file
from sitegen.publish.exportcache import CaseRowsKept
from sitegen.publish.everyeval import every_eval_files, every_eval_name
from sitegen.publish.metadata import FOLDER as METADATA_FOLDER
from sitegen.publish.signing import SIGNATURE
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


# names the build gives files under downloads/ besides the exports, with what each is
_RESERVED = {
    METADATA_FOLDER: "the downloads folder of the run metadata",
    LOG: "the publication log's name in the downloads",
    LOG_FOLDER: "the downloads folder of the SHA256SUMS the publication log names",
    SIGNATURE: "the name of the signature of SHA256SUMS",
    ALLOWED_SIGNERS: "the name of the key file the signature is checked with",
}


def check_export_names(records: m.Records) -> None:
    """A records file may not be published under a name an export or the build's own files (the run metadata, the
    publication log, the signature) take, in any case: refused at its name in sitegen.json."""
    exports = {name.casefold() for name in export_names(records)}
    reserved = {name.casefold(): what for name, what in _RESERVED.items()}
    taken = [(index, published.name) for index, published in enumerate(records.config.publish)
             if published.name.casefold() in exports | reserved.keys()]
    if not taken:
        return
    config = records.files["sitegen.json"]
    doc, problems = parse_json(config.path, config.data)
    if problems:
        raise PublicationError(problems)
    raise PublicationError([
        doc.diagnostic(f"/publish/{index}/name", f'"{name}" is {reserved[name.casefold()]}; publish this record under another '
                       "name", "publish.reserved-name") if name.casefold() in reserved else
        doc.diagnostic(f"/publish/{index}/name", f'"{name}" is the name of a standard export the build writes into the '
                       "downloads; publish this file under another name", "publish.name-taken")
        for index, name in taken])
