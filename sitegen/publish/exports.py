"""The standard exports (CSV, Every Eval Ever, Croissant), made at build time from the verified results, never scored again."""

from __future__ import annotations

from sitegen.core.files import InMemoryFile
from sitegen.publish.croissant import CROISSANT, croissant_file
from sitegen.publish.everyeval import every_eval_files
from sitegen.publish.exportcontext import ExportContext
from sitegen.publish.tables import table_files


def export_files(context: ExportContext) -> tuple[tuple[str, InMemoryFile], ...]:
    """Every export as (name under downloads/, file), sorted by name; the Croissant file describes all the others."""
    files = table_files(context) + every_eval_files(context)
    files += ((CROISSANT, croissant_file(context, files)),)
    return tuple(sorted(((name, InMemoryFile(data)) for name, data in files), key=lambda item: item[0]))
