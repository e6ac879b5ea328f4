"""A measure is one record: every list, label, schema enum and reason text elsewhere is derived from the registry."""

from __future__ import annotations

import json
import pickle
import pkgutil
import re
from pathlib import Path
from types import SimpleNamespace

import pytest
from babel.messages.pofile import read_po
from markupsafe import Markup

import sitegen.score.measures as package
from sitegen.core import model as m
from sitegen.load.records import load_records
from sitegen.render.catalogs import load_catalogs
from sitegen.render.environment import Renderer, _reason_word
from sitegen.score.measures import grounding
from sitegen.score.measures.base import Difference, Reason
from sitegen.score.measures.registry import EXAMPLE_CASES, MEASURE_FUNCTIONS, MEASURES, REASON_WORDS, REASON_WORDS_ABSENT, REGISTRY, TITLES
from sitegen.score.scoring import observe_run

ROOT = Path(__file__).resolve().parent.parent
RECORDS = ROOT / "records"
SMALL = Path(__file__).parent / "data" / "records-small"
LOCALES = ROOT / "sitegen" / "locales"
SCHEMA = ROOT / "sitegen" / "schemas" / "results.schema.json"
SHARED = {"base", "registry"}  # the package's modules that are not a measure


def _enums(node, path=""):
    """Every enum (and propertyNames enum) of a schema, by where it stands."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "enum":
                yield path, value
            else:
                yield from _enums(value, f"{path}/{key}")
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from _enums(value, f"{path}/{i}")


def test_every_module_of_the_package_is_one_registered_measure_in_the_method_order():
    modules = sorted(info.name for info in pkgutil.iter_modules(package.__path__) if info.name not in SHARED)
    assert sorted(name.upper() for name in modules) == sorted(MEASURES)
    assert MEASURES == ("GROUNDING", "CLEAN_CASE_FLAWS", "PROHIBITED_OUTPUT", "QUOTE_FIDELITY", "REDUCER_SURVIVAL",
                        "INVARIANT_PAIRS", "IDENTICAL_INPUT_STABILITY")  # METHOD.md's order, the order of every list
    assert tuple(MEASURE_FUNCTIONS) == MEASURES
    assert all(MEASURE_FUNCTIONS[k] is REGISTRY[k].function for k in MEASURES)


def test_the_shipped_schemas_measure_enums_are_the_registrys_ids():
    # the schema is published byte for byte, so it is compared with the registry rather than generated at run time
    enums = dict(_enums(json.loads(SCHEMA.read_text(encoding="utf-8"))))
    measure_enums = {path: values for path, values in enums.items()
                     if path.endswith("/properties/measure") or path.endswith("/measures/propertyNames")}
    assert set(measure_enums) == {
        "/properties/runs/items/properties/measures/items/properties/measure",
        "/properties/runs/items/properties/cases/items/properties/measures/propertyNames",
        "/properties/runs/items/properties/observations/items/properties/measure",
    }
    for path, values in measure_enums.items():
        assert values == list(MEASURES), path


def test_the_model_keeps_no_list_of_measures_of_its_own():
    assert not hasattr(m, "MEASURES")


def test_the_templates_carry_no_measure_title_or_reason_word_of_their_own():
    templates = {p.name: p.read_text(encoding="utf-8") for p in (ROOT / "sitegen" / "templates").glob("*.j2")}
    assert not [name for name, text in templates.items() if re.search(r"macro (measure_title|reason_word)\b", text)]
    ids = "|".join(MEASURES)
    assert not [name for name, text in templates.items() if re.search(rf'"({ids})"', text)]
    assert not [name for name, text in templates.items() if re.search(r'reason\s*==', text)]


def test_every_title_and_reason_word_is_in_the_catalog_template_and_translated_in_every_language():
    msgids = set(TITLES.values()) | set(REASON_WORDS.values()) | set(REASON_WORDS_ABSENT.values())
    with (LOCALES / "sitegen.pot").open("rb") as f:
        template = {message.id for message in read_po(f) if message.id}
    assert msgids <= template, sorted(msgids - template)
    for lang in ("sv", "en"):
        with (LOCALES / lang / "LC_MESSAGES" / "sitegen.po").open("rb") as f:
            catalog = read_po(f)
        untranslated = sorted(msgid for msgid in msgids if not (catalog.get(msgid) and catalog.get(msgid).string))
        assert not untranslated, (lang, untranslated)


def test_a_code_two_measures_share_has_one_word():
    words = {}
    for measure in REGISTRY.values():
        codes = [r.code for r in measure.reasons]
        assert len(codes) == len(set(codes)), measure.id
        for r in measure.reasons:
            assert words.setdefault(r.code, r.word) == r.word, r.code
            assert r.detail is not None, (measure.id, r.code)
    assert words == dict(REASON_WORDS)


def test_every_matcher_miss_has_an_explanation_in_the_grounding_record():
    # the matcher's reasons for a miss are GROUNDING's reason codes; `sitegen explain` words each from the same record
    misses = {"nothing", "kind", "rule", "rule.support", "missing", "evidence", "taken"}
    explained = {r.code for r in grounding.REASONS if r.explained is not None}
    assert explained == misses
    text = REGISTRY["GROUNDING"].reason("kind").explained(Reason("kind", closest="f1", got="strength", want="flaw"))
    assert text == "the passage was reported in the other list (a strength instead of a flaw)"


def test_the_example_cases_are_the_registrys_and_exist_in_the_bundled_records():
    records = load_records(RECORDS)
    assert tuple(EXAMPLE_CASES) == MEASURES
    assert all(EXAMPLE_CASES[k] == REGISTRY[k].example_case in records.case_versions for k in MEASURES)


@pytest.fixture(scope="module")
def observed():
    """Every observation of every run of the bundled and the small records."""
    found = []
    for folder in (RECORDS, SMALL):
        records = load_records(folder)
        for run in records.runs:
            observations = observe_run(records, run.id)
            if observations is not None:
                found.extend(o for items in observations.values() for o in items)
    return found


def test_every_reason_the_scorer_gives_is_one_of_its_measures_with_its_words(observed):
    failing = [o for o in observed if o.result != m.PASSED]
    assert failing
    for o in failing:
        assert o.why is not None and o.why.code == o.reason, o
        assert o.reason in {r.code for r in REGISTRY[o.measure].reasons}, o
    assert all(o.why is None for o in observed if o.result == m.PASSED)  # passed ones cost no reason


def test_the_records_detail_is_rendered_from_the_structured_reason(observed):
    for o in observed:
        if o.why is None:
            continue
        text = REGISTRY[o.measure].reason(o.why.code).detail(o.why)
        assert o.detail == (grounding.detail(o.result, o.why) if o.measure == "GROUNDING" else text), o


def test_a_comparison_keeps_every_difference_and_the_record_says_how_many_more(observed):
    several = [o for o in observed if o.measure in ("INVARIANT_PAIRS", "IDENTICAL_INPUT_STABILITY")
               and o.why is not None and len(o.why.differences) > 1]
    assert {o.measure for o in several} == {"INVARIANT_PAIRS", "IDENTICAL_INPUT_STABILITY"}
    for o in several:
        assert all(isinstance(d, Difference) and d.left != d.right for d in o.why.differences)
        assert len({d.key for d in o.why.differences}) == len(o.why.differences)
        assert o.detail.startswith(f"{o.why.differences[0].key}: ")
        assert o.detail.endswith(f" (+{len(o.why.differences) - 1} more difference(s))")
    one = Reason("count.flaws", repetitions=(1, 3), differences=(Difference("flaws", 1, 2),))
    assert REGISTRY["IDENTICAL_INPUT_STABILITY"].reason("count.flaws").detail(one) == "flaws: repetition 1 gives 1, repetition 3 gives 2"
    three = Reason("count.flaws", repetitions=(1, 3), differences=(Difference("flaws", 1, 2), Difference("unexpected", 0, 1),
                                                                   Difference("prohibited", 0, 1)))
    assert REGISTRY["IDENTICAL_INPUT_STABILITY"].reason("count.flaws").detail(three) == (
        "flaws: repetition 1 gives 1, repetition 3 gives 2 (+2 more difference(s))")


def test_a_pair_reason_names_both_versions_and_the_repetition(observed):
    pair = next(o for o in observed if o.measure == "INVARIANT_PAIRS" and o.why is not None)
    assert (pair.why.pair, pair.why.left, pair.why.repetition) == (pair.subject, pair.case_version, int(pair.repetition))
    assert pair.why.right in pair.detail


def test_a_reason_is_a_frozen_value():
    why = Reason("count.unexpected", repetitions=(1, 2), differences=(Difference("unexpected", 2, 3),))
    assert why == Reason("count.unexpected", repetitions=(1, 2), differences=(Difference("unexpected", 2, 3),))
    assert why != Reason("count.unexpected", repetitions=(1, 3), differences=(Difference("unexpected", 2, 3),))
    assert why.differences[0].right == 3
    assert pickle.loads(pickle.dumps(why)) == why  # observations cross to and from worker processes
    with pytest.raises(AttributeError):
        why.code = "other"
    with pytest.raises(AttributeError):
        why.closest


@pytest.mark.parametrize("lang", ["sv", "en"])
def test_the_pages_reason_words_are_the_registrys_texts_in_the_pages_language(lang):
    with (LOCALES / lang / "LC_MESSAGES" / "sitegen.po").open("rb") as f:
        catalog = read_po(f)
    translations = load_catalogs(LOCALES, [lang])[lang]
    config = SimpleNamespace(base_url="https://example.org/", default_language="sv", case_text_language="sv")
    renderer = Renderer(lang, translations, templates=ROOT / "sitegen" / "templates", config=config, languages=("sv", "en"),
                        build_date="2026-12-01")
    word = renderer.env.globals["word"]
    for code, msgid in REASON_WORDS.items():
        assert str(word.reason[code]) == str(Markup.escape(catalog.get(msgid).string)), code
    for measure, msgid in TITLES.items():
        assert str(word.measure[measure]) == str(Markup.escape(catalog.get(msgid).string)), measure
    assert str(word.reason["no-such<code>"]) == "<code>no-such&lt;code&gt;</code>"
    assert str(word.reason[""]) == "–"
    assert isinstance(_reason_word(lambda s: Markup(s), "nothing"), Markup)
