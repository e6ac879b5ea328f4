"""Croissant 1.0 metadata (JSON-LD) for the downloads, so dataset search engines and ML tools find, read and check them."""

from __future__ import annotations

import hashlib
from typing import Sequence

from sitegen.publish.exportcontext import ExportContext, json_bytes
from sitegen.publish.tables import CASE_COLUMNS, CASE_TABLE, MEASURE_COLUMNS, METADATA, RUN_COLUMNS, column_text, measure_table
from sitegen.score.measures.base import N_
from sitegen.score.measures.registry import MEASURES, TITLES

CROISSANT = "croissant.json"
CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
# The @context of the Croissant 1.0 specification, as its examples and its reference library write it.
CONTEXT = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
WHOLE_NUMBERS = frozenset({"suite_version", "scorer_version", "repetition"})  # the only columns never holding a word
# What each kind of file is, said once for all files of that kind
FILE_TEXTS = {
    "records": N_("A records file exactly as it was checked in: the results, the test cases with their documents, rules and "
                  "answer keys, or the engine's answers."),
    "measure": N_("One measure's result and counts in every published run, one row per run (CSV)."),
    "cases": N_("Every case version's result in every repetition of every published run (CSV)."),
    "metadata": N_("What every column of the CSV tables holds, in every language of the site."),
    "every-eval": N_("One published run in the Every Eval Ever format: each observed measure as passed of observed."),
    "runs": N_("Every published run's outcome and scorer, read from the results file as it was checked in."),
}
# The record set read straight from the results record (its format: sitegen/schemas/results.schema.json)
RUN_FIELDS = (
    ("run", "sc:Text", RUN_COLUMNS[0].description),
    ("outcome", "sc:Text", N_("The run's outcome: PASS, BLOCK, PENDING_CONFIRMATION, NOT_OBSERVED or CRASHED.")),
    ("scorer_version", "sc:Integer", next(c for c in RUN_COLUMNS if c.name == "scorer_version").description),
    ("matching_method", "sc:Text", N_("The matching method of that scorer version, by its id.")),
)


def croissant_file(context: ExportContext, exports: Sequence[tuple[str, bytes]]) -> bytes:
    """The Croissant description of the published records files and of the other exports, each with its SHA-256."""
    return json_bytes(croissant_document(context, exports))


def croissant_document(context: ExportContext, exports: Sequence[tuple[str, bytes]]) -> dict:
    """The dataset: its names and description in every language, its files, and the record sets of its tables."""
    config = context.records.config
    files = [_file(context, name, file.sha256, "application/json", "records") for name, file in context.downloads]
    kinds = {**{measure_table(measure): "measure" for measure in MEASURES}, CASE_TABLE: "cases", METADATA: "metadata"}
    for name, data in exports:
        files.append(_file(context, name, hashlib.sha256(data).hexdigest(), "text/csv" if name.endswith(".csv") else
                           "application/json", kinds.get(name, "every-eval")))
    document = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": context.title,
        "alternateName": [{"@language": lang, "@value": config.title[lang]} for lang in context.languages],
        "description": _tagged(context, N_("The measured quality of an AI review engine: every published run scored with "
                                           "seven separate measures, each read as passed of observed, with the test cases, "
                                           "the engine's answers and the results they were scored into.")),
        "url": config.base_url,
        "sameAs": config.source_repository,
        "citeAs": f"{context.title}. {config.base_url}",
        "datePublished": context.date,
        "inLanguage": list(context.languages),
        "distribution": sorted(files, key=lambda f: f["@id"]),
        "recordSet": [_measure_set(context, measure) for measure in MEASURES] + [_case_set(context)] + _runs_set(context),
    }
    if config.license is not None:
        document["license"] = config.license["url"]
    return document


def _tagged(context: ExportContext, msgid: str, **values: object) -> list[dict[str, str]]:
    """A text in every language of the site, as JSON-LD language-tagged values."""
    return _languages(context.texts(msgid, **values))


def _file(context: ExportContext, name: str, sha256: str, encoding: str, kind: str) -> dict:
    return {
        "@type": "cr:FileObject",
        "@id": name,
        "name": name,
        "description": _tagged(context, FILE_TEXTS[kind]),
        "contentUrl": name,  # beside this file in the downloads folder, wherever that folder is copied
        "encodingFormat": encoding,
        "sha256": sha256,
    }


def _field(table: str, record_set: str, column: str, data_type: str, description: list) -> dict:
    return {
        "@type": "cr:Field",
        "@id": f"{record_set}/{column}",
        "name": column,
        "description": description,
        "dataType": data_type,
        "source": {"fileObject": {"@id": table}, "extract": {"column": column}},
    }


def _data_type(column: str) -> str:
    """Counts are text: the words NOT_OBSERVED and CRASHED stand in them where there is nothing to count."""
    if column == "date":
        return "sc:Date"
    return "sc:Integer" if column in WHOLE_NUMBERS else "sc:Text"


def _measure_set(context: ExportContext, measure: str) -> dict:
    table = measure_table(measure)
    return {
        "@type": "cr:RecordSet",
        "@id": measure,
        "name": measure,
        "description": _tagged(context, TITLES[measure]),
        "field": [_field(table, measure, c.name, _data_type(c.name), _tagged(context, c.description))
                  for c in RUN_COLUMNS + MEASURE_COLUMNS],
    }


def _case_set(context: ExportContext) -> dict:
    return {
        "@type": "cr:RecordSet",
        "@id": "case-results",
        "name": "case-results",
        "description": _tagged(context, FILE_TEXTS["cases"]),
        "field": [_field(CASE_TABLE, "case-results", c.name, _data_type(c.name), _languages(column_text(context, c.description, c.measure)))
                  for c in CASE_COLUMNS],
    }


def _runs_set(context: ExportContext) -> list[dict]:
    """The runs as the results record holds them, so that a Croissant reader checks that file's bytes too (when published)."""
    results = context.download_named("results.json")
    if results is None:
        return []
    return [{
        "@type": "cr:RecordSet",
        "@id": "runs",
        "name": "runs",
        "description": _tagged(context, FILE_TEXTS["runs"]),
        "field": [{
            "@type": "cr:Field",
            "@id": f"runs/{name}",
            "name": name,
            "description": _tagged(context, text),
            "dataType": data_type,
            "source": {"fileObject": {"@id": results}, "extract": {"jsonPath": f"$.runs[*].{name}"}},
        } for name, data_type, text in RUN_FIELDS],
    }]


def _languages(texts: dict[str, str]) -> list[dict[str, str]]:
    """Texts by language as JSON-LD language-tagged values (Croissant 1.0 has no language maps)."""
    return [{"@language": lang, "@value": text} for lang, text in texts.items()]
