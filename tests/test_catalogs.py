"""Catalogs are checked against their template before use; each kind of problem names its file, line and code."""

from __future__ import annotations

import ast
import inspect
from pathlib import Path

import pytest

import sitegen.render.catalogs
from sitegen.render.catalogs import check_catalogs, load_catalogs
from sitegen.core.errors import CatalogError, Diagnostic, DiagnosticsError

DATA = Path(__file__).parent / "data" / "catalogs"


def po(scenario: str, lang: str) -> str:
    return str(DATA / scenario / lang / "LC_MESSAGES" / "sitegen.po")


def pot(scenario: str) -> str:
    return str(DATA / scenario / "sitegen.pot")


def problems(scenario: str, languages: list[str]) -> list[tuple[str, int | None, str]]:
    with pytest.raises(CatalogError) as caught:
        load_catalogs(DATA / scenario, languages)
    return [(d.path, d.line, d.code) for d in caught.value.diagnostics]


def messages(scenario: str, languages: list[str]) -> list[str]:
    with pytest.raises(CatalogError) as caught:
        load_catalogs(DATA / scenario, languages)
    return [d.message for d in caught.value.diagnostics]


# --- a complete catalog ---------------------------------------------------------


def test_complete_catalogs_translate():
    catalogs = load_catalogs(DATA / "good", ["sv", "en"])
    assert set(catalogs) == {"sv", "en"}
    sv, en = catalogs["sv"], catalogs["en"]
    assert sv.gettext("Results") == "Resultat"
    assert sv.gettext("Published %(date)s") == "Publicerad %(date)s"
    assert sv.ngettext("%(num)s run", "%(num)s runs", 1) == "%(num)s körning"
    assert sv.ngettext("%(num)s run", "%(num)s runs", 2) == "%(num)s körningar"
    assert sv.ngettext("%(num)s run", "%(num)s runs", 0) == "%(num)s körningar"
    assert sv.pgettext("outcome", "Pass") == "Godkänd"
    # English carries an edited English form where the fixture has one.
    assert en.pgettext("outcome", "Pass") == "Passed"
    assert en.ngettext("%(num)s run", "%(num)s runs", 1) == "%(num)s run"
    assert en.gettext("Results") == "Results"


def test_context_keeps_the_short_word_apart():
    sv = load_catalogs(DATA / "good", ["sv"])["sv"]
    # "Pass" only has a translation in the "outcome" context.
    assert sv.gettext("Pass") == "Pass"
    assert sv.pgettext("outcome", "Pass") == "Godkänd"


def test_result_is_read_only():
    catalogs = load_catalogs(DATA / "good", ["sv"])
    with pytest.raises(TypeError):
        catalogs["en"] = catalogs["sv"]  # type: ignore[index]


def test_check_catalogs_accepts_complete_catalogs():
    assert check_catalogs(DATA / "good", ["sv", "en"]) is None


def test_check_catalogs_runs_the_same_checks():
    with pytest.raises(CatalogError) as caught:
        check_catalogs(DATA / "fuzzy", ["sv"])
    assert [(d.path, d.line, d.code) for d in caught.value.diagnostics] == [(po("fuzzy", "sv"), 17, "catalog.fuzzy")]


def test_never_loads_through_translations_load():
    # Translations.load falls back to no translation when a file is missing.
    tree = ast.parse(inspect.getsource(sitegen.render.catalogs))
    attributes = {node.attr for node in ast.walk(tree) if isinstance(node, ast.Attribute)}
    assert "load" not in attributes


# --- one fixture per problem ------------------------------------------------------


def test_untranslated_entries_and_plural_forms():
    assert problems("untranslated", ["sv"]) == [
        (po("untranslated", "sv"), 12, "catalog.untranslated"),
        (po("untranslated", "sv"), 22, "catalog.untranslated"),
    ]
    assert messages("untranslated", ["sv"]) == [
        'msgid "Results" is not translated (msgstr empty)',
        'msgid "%(num)s run" is not translated (msgstr[1] empty)',
    ]


def test_english_must_be_translated_too():
    assert problems("english-empty", ["en"]) == [(po("english-empty", "en"), 29, "catalog.untranslated")]
    assert messages("english-empty", ["en"]) == ['msgctxt "outcome" msgid "Pass" is not translated (msgstr empty)']


def test_fuzzy_entry():
    assert problems("fuzzy", ["sv"]) == [(po("fuzzy", "sv"), 17, "catalog.fuzzy")]
    assert messages("fuzzy", ["sv"]) == ['msgid "Published %(date)s" is marked fuzzy']


def test_msgid_of_the_template_missing():
    assert problems("missing", ["sv"]) == [(po("missing", "sv"), None, "catalog.missing")]
    assert messages("missing", ["sv"]) == [f'msgctxt "outcome" msgid "Pass" of {pot("missing")}:28 has no entry']


def test_placeholders_dropped_or_renamed():
    assert problems("placeholder", ["sv"]) == [
        (po("placeholder", "sv"), 17, "catalog.placeholder"),
        (po("placeholder", "sv"), 22, "catalog.placeholder"),
    ]
    assert messages("placeholder", ["sv"]) == [
        'msgid "Published %(date)s": msgstr lacks %(date)s; msgstr has unknown %(datum)s',
        'msgid "%(num)s run": msgstr[1] lacks %(num)s',
    ]


def test_placeholder_of_another_type_found_by_babel_check():
    assert problems("placeholder-type", ["sv"]) == [(po("placeholder-type", "sv"), 17, "catalog.placeholder")]
    (message,) = messages("placeholder-type", ["sv"])
    assert message.startswith('msgid "Published %(date)s": ')
    assert "'date'" in message


def test_lone_percent_sign():
    # Jinja's newstyle gettext always %-formats, so a bare % breaks rendering.
    assert problems("lone-percent", ["sv"]) == [(po("lone-percent", "sv"), 12, "catalog.placeholder")]


def test_syntax_error():
    assert problems("syntax", ["sv"]) == [(po("syntax", "sv"), 13, "catalog.syntax")]
    assert messages("syntax", ["sv"]) == ["Unknown or misformatted keyword"]


def test_catalog_file_missing():
    assert problems("file-missing", ["sv", "en"]) == [(po("file-missing", "sv"), None, "catalog.file-missing")]


def test_template_file_missing():
    assert problems("template-missing", ["sv"]) == [(pot("template-missing"), None, "catalog.file-missing")]


def test_obsolete_entry():
    assert problems("obsolete", ["sv"]) == [(po("obsolete", "sv"), 32, "catalog.obsolete")]


def test_entry_not_in_template():
    assert problems("extra", ["sv"]) == [(po("extra", "sv"), 33, "catalog.extra")]


def test_duplicate_entry_is_not_merged_silently():
    assert problems("duplicate", ["sv"]) == [(po("duplicate", "sv"), 32, "catalog.duplicate")]
    assert messages("duplicate", ["sv"]) == ['msgid "Results" appears twice (first at line 12)']


def test_plural_forms_header_wrong_for_language():
    assert problems("plural-forms", ["sv"]) == [(po("plural-forms", "sv"), 2, "catalog.plural")]


def test_plural_entry_turned_singular():
    # ngettext would silently fall back to English for a singular entry.
    assert problems("plural-dropped", ["sv"]) == [(po("plural-dropped", "sv"), 22, "catalog.plural")]


def test_every_problem_of_every_language_at_once():
    assert problems("several", ["sv", "en", "de"]) == [
        (po("several", "sv"), 3, "catalog.fuzzy"),
        (po("several", "en"), 2, "catalog.language"),
        (po("several", "en"), 29, "catalog.untranslated"),
        (po("several", "de"), None, "catalog.file-missing"),
    ]


def test_error_is_a_located_diagnostics_error():
    with pytest.raises(CatalogError) as caught:
        load_catalogs(DATA / "syntax", ["sv"])
    error = caught.value
    assert isinstance(error, DiagnosticsError)
    assert error.exit_code == 2
    assert error.lines() == [f"{po('syntax', 'sv')}:13: error: Unknown or misformatted keyword [catalog.syntax]"]
    assert all(isinstance(d, Diagnostic) for d in error.diagnostics)


def test_no_language_no_catalog():
    assert dict(load_catalogs(DATA / "good", [])) == {}
