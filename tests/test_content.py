"""The method page's prose: both languages carry the same files, each measure the same four sections, and no raw HTML."""

from __future__ import annotations

import re
from pathlib import Path

import markdown
import pytest

from sitegen.core.model import STATES
from sitegen.score.measures.registry import MEASURES

CONTENT = Path(__file__).resolve().parent.parent / "sitegen" / "templates" / "content"
LOCALES = Path(__file__).resolve().parent.parent / "sitegen" / "locales"
LANGUAGES = ("sv", "en")

EXPECTED_FILES = {
    "method-intro.md",
    "matching.md",
    "glossary.md",
    "outcomes.md",
    "release.md",
    "downloads.md",
    "changelog-intro.md",
    "accessibility.md",
} | {f"measure-{m}.md" for m in MEASURES}

SECTIONS = {
    "en": ["One observation", "Passes when", "Fails when", "Example"],
    "sv": ["En observation", "Godkänns när", "Underkänns när", "Exempel"],
}

ALL_FILES = sorted((lang, name) for lang in LANGUAGES for name in EXPECTED_FILES)


def read(lang: str, name: str) -> str:
    return (CONTENT / lang / name).read_text(encoding="utf-8")


def sections(text: str, level: int = 3) -> list[tuple[str, str]]:
    """(heading, body) of every section at one heading level, in order."""
    parts = re.split(rf"^{'#' * level} (.+)$", text, flags=re.MULTILINE)
    return [(parts[i].strip(), parts[i + 1].strip()) for i in range(1, len(parts), 2)]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_each_language_has_exactly_the_expected_files(lang):
    assert {p.name for p in (CONTENT / lang).glob("*.md")} == EXPECTED_FILES


@pytest.mark.parametrize(("lang", "name"), ALL_FILES)
def test_no_raw_html(lang, name):
    assert "<" not in read(lang, name)


@pytest.mark.parametrize(("lang", "name"), ALL_FILES)
def test_starts_with_one_title(lang, name):
    text = read(lang, name)
    first, _, rest = text.partition("\n")
    assert re.fullmatch(r"# \S.*\S", first), first
    assert not re.search(r"^# ", rest, flags=re.MULTILINE), "only the first line may be a level-1 heading"
    # The page renders measures under an h3 and every other file under an h2, shifting Markdown headings one down:
    # measure sections are ###, other files' sections ##, so no level is skipped.
    sub = "###" if name.startswith("measure-") else "##"
    assert set(re.findall(r"^(#+) ", rest, flags=re.MULTILINE)) <= {sub}
    assert text.endswith("\n") and not text.endswith("\n\n")


@pytest.mark.parametrize(("lang", "name"), ALL_FILES)
def test_no_links_written_in_prose(lang, name):
    # The template adds links (to example cases, downloads); prose carries none.
    text = read(lang, name)
    assert "](" not in text
    assert "http" not in text


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("measure", MEASURES)
def test_measure_has_the_four_sections_in_order(lang, measure):
    text = read(lang, f"measure-{measure}.md")
    found = sections(text)
    assert [heading for heading, _ in found] == SECTIONS[lang]
    for heading, body in found:
        assert body, heading
        assert "\n\n" not in body, f"{heading}: one short paragraph"


@pytest.mark.parametrize("lang", LANGUAGES)
@pytest.mark.parametrize("measure", MEASURES)
def test_measure_renders_as_title_and_four_subsections(lang, measure):
    html = markdown.markdown(read(lang, f"measure-{measure}.md"))
    assert html.count("<h1>") == 1
    assert html.count("<h3>") == 4
    assert html.count("<p>") == 4


@pytest.mark.parametrize("name", sorted(EXPECTED_FILES))
def test_both_languages_use_the_same_technical_ids(name):
    ids = set(MEASURES) | set(STATES)

    def used(lang: str) -> set[str]:
        return {word for word in re.findall(r"\b[A-Z][A-Z_]+\b", read(lang, name)) if word in ids}

    assert used("sv") == used("en")


@pytest.mark.parametrize("name", sorted(EXPECTED_FILES))
def test_both_languages_have_the_same_structure(name):
    sv, en = read("sv", name), read("en", name)
    assert len(sections(sv, 2)) == len(sections(en, 2))
    assert len(sections(sv, 3)) == len(sections(en, 3))
    assert sv.count("\n: ") == en.count("\n: ")
    assert sv.count("\n    ") == en.count("\n    ")


@pytest.mark.parametrize("lang", LANGUAGES)
def test_glossary_is_a_definition_list(lang):
    html = markdown.markdown(read(lang, "glossary.md"), extensions=["def_list"])
    assert html.count("<dl>") == 1
    assert html.count("<dt>") == html.count("<dd>") >= 15


@pytest.mark.parametrize("lang", LANGUAGES)
def test_outcomes_define_every_state_for_a_measure_and_a_run(lang):
    html = markdown.markdown(read(lang, "outcomes.md"), extensions=["def_list"])
    terms = re.findall(r"<dt>(.*?)</dt>", html)
    assert [re.search(r"\(([A-Z_]+)\)", t).group(1) for t in terms] == list(STATES)
    assert html.count("<dd>") == 2 * len(STATES)


@pytest.mark.parametrize("lang", LANGUAGES)
def test_downloads_prose_leaves_the_instructions_to_the_downloads_page(lang):
    # The prose opens both the downloads page and the method page's downloads section; the one set of
    # instructions for checking a download is the downloads page's own section, which knows the files' layout.
    text = read(lang, "downloads.md")
    assert "sha256sum" not in text and "Get-FileHash" not in text
    assert not sections(text, 2), "a section here would sit under the page's h1 as an h3"


@pytest.mark.parametrize("name", sorted(EXPECTED_FILES))
def test_swedish_writes_numbers_and_quotes_the_swedish_way(name):
    text = re.sub(r"WCAG \d\.\d", "WCAG", read("sv", name))  # a version is a name, not a decimal number
    assert not re.search(r"\d\.\d", text), "decimal comma, not point"
    assert '"' not in text, "Swedish quotation marks (”…”)"


# --- what the method page must say, in both languages ------------------------------------

ONE_TO_ONE = {
    # sitegen/score/matching.py _best_assignment: most matches, then most exact matches, then answer order, then key order
    "en": ("One to one", ["the most matches", "the most exact matches", "the findings the engine gave first",
                          "the earliest expected finding in the key"]),
    "sv": ("Ett mot ett", ["flest matchningar", "flest exakta matchningar", "de fynd som motorn gav först",
                           "det tidigaste förväntade fynd i facit"]),
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_one_to_one_states_the_tie_break_order_the_scorer_uses(lang):
    heading, steps = ONE_TO_ONE[lang]
    body = dict(sections(read(lang, "matching.md"), 2))[heading]
    at = [body.find(step) for step in steps]
    assert -1 not in at, [s for s, i in zip(steps, at) if i < 0]
    assert at == sorted(at), "most matches, then exact matches, then the answer's order, then the key's"


def evidence(lang: str) -> str:
    return dict(sections(read(lang, "matching.md"), 2))[{"en": "Evidence", "sv": "Belägg"}[lang]]


@pytest.mark.parametrize("lang", LANGUAGES)
def test_matching_says_from_which_scorer_contained_matches_count(lang):
    from sitegen.render.catalogs import load_catalogs
    from sitegen.core.model import CURRENT_SCORER, MATCHING_METHODS

    text = " ".join(evidence(lang).split())
    for method in MATCHING_METHODS.values():
        assert method in text
    older = min(MATCHING_METHODS)
    assert older < CURRENT_SCORER
    assert f"version {CURRENT_SCORER}" in text.lower() and f"version {older}" in text.lower()
    # the label the overview and the run page give a run scored with the older scorer, as the catalog words it
    label = load_catalogs(LOCALES, [lang])[lang].gettext("as measured with scorer v%(version)s") % {"version": older}
    assert label in text


@pytest.mark.parametrize("lang", LANGUAGES)
def test_matching_says_a_key_with_a_prohibited_finding_identical_to_an_expected_one_is_refused(lang):
    body = dict(sections(read(lang, "matching.md"), 2))[{"en": "Where each finding ends up", "sv": "Var varje fynd hamnar"}[lang]]
    # METHOD.md's Decision: identical "however each passage is written (by quote, by lines or both, it is the same span of
    # the document)", which the page left out (sitegen/load/keys.py compares passages so)
    said = {"en": ["prohibited finding is identical to an expected one", "error in the records", "the build refuses",
                   "however each passage is written: by quote, by lines or both, it is the same span of the document"],
            "sv": ["förbjudet fynd är identiskt med ett förväntat", "fel i underlaget", "bygget vägrar",
                   "hur textstället än anges: med citat, med rader eller med båda är det samma del av dokumentet"]}[lang]
    assert all(phrase in " ".join(body.split()) for phrase in said), said


TRACING = {
    "en": ("Tracing a failed observation", ["run", "case version", "repetition", "stage", "expected finding or quote", "reason",
                                            "results file"]),
    "sv": ("Att spåra en underkänd observation", ["körning", "testfallets version", "upprepningen", "steget",
                                                  "förväntade fynd eller citat", "skälet", "resultatfilen"]),
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_outcomes_say_how_a_failed_observation_is_traced_and_where(lang):
    from sitegen.render.catalogs import load_catalogs

    heading, words = TRACING[lang]
    body = " ".join(dict(sections(read(lang, "outcomes.md"), 2))[heading].split())
    assert [w for w in words if w not in body] == []
    # names the run page's list as the catalog words its heading
    assert load_catalogs(LOCALES, [lang])[lang].gettext("Observations that did not plainly pass") in body


def glossary(lang: str) -> dict[str, str]:
    """Each term of the glossary with its definition, whitespace collapsed."""
    return {term: " ".join(definition.split())
            for term, definition in re.findall(r"^(\S[^\n]*)\n: ([^\n]+)", read(lang, "glossary.md"), re.MULTILINE)}


GLOSSARY_TERMS = {"en": ("Fingerprint", "Pair", "Invariance pair", "Contrast pair"),
                  "sv": ("Fingeravtryck", "Par", "Invarianspar", "Kontrastpar")}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_the_glossary_says_which_runs_and_pairs_are_compared_as_the_pages_do(lang):
    """The glossary said runs are compared "only when their configurations are compatible" under Fingerprint, while a run
    page compares runs of different setups; and under Invariance pair that its versions are compared, while an
    invariance pair given different rules is not counted. It now states the rule the run and case pages apply."""
    from sitegen.render.catalogs import load_catalogs

    catalog = load_catalogs(LOCALES, [lang])[lang]
    fingerprint, pair, invariance, contrast = (glossary(lang)[term] for term in GLOSSARY_TERMS[lang])
    # the run page's rule for a comparison, and why a different setup does not stop one, as the catalog words them
    rule = catalog.gettext("No earlier run can be compared with this one: counts are compared only between runs of the same "
                           "suite version with the same scorer, matching method, assessment and stages. The latest earlier "
                           "run with counts, %(previous)s, was measured differently:")
    assert rule.split(": ", 1)[1].split(". ")[0] in fingerprint
    setup = catalog.gettext("run setup %(before)s (%(before_print)s) → %(after)s (%(after_print)s): the engine was configured "
                            "differently, which is part of what is measured, not of how it is measured")
    assert setup.split(", ", 1)[1].split(" ", 1)[1] in fingerprint
    # a pair given different rules is not counted, whatever its kind: said of every pair, not of contrast pairs alone
    rules_differ = {"en": "deliberately given different rules", "sv": "medvetet har fått olika regler"}[lang]
    assert rules_differ in pair and rules_differ not in contrast
    assert {"en": "given the same rules", "sv": "med samma regler"}[lang] in invariance


DUPLICATE = {
    # sitegen/score/matching.py judge_stage: a duplicate would match (all four conditions) an expected finding another took,
    # and is a duplicate of every such expected finding
    "en": ("on all four conditions", "every expected finding so taken", "is no duplicate"),
    "sv": ("på alla fyra villkoren", "vart och ett av de upptagna förväntade fynd", "är ingen dubblett"),
}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_one_to_one_defines_a_duplicate_by_the_four_conditions_and_of_every_expected_finding_it_would_match(lang):
    """It said "a second finding at a passage whose expected finding is already taken is a duplicate": a finding at that
    passage with a rule the key does not accept is unexpected, not a duplicate, and the scorer-7 paragraph above spoke of a
    finding that "duplicates several expected findings" the page never said could exist."""
    body = " ".join(dict(sections(read(lang, "matching.md"), 2))[ONE_TO_ONE[lang][0]].split())
    assert [phrase for phrase in DUPLICATE[lang] if phrase not in body] == []


@pytest.mark.parametrize("lang", LANGUAGES)
def test_survival_says_a_duplicate_is_the_reviewers_own_and_from_which_scorer_for_every_expected_finding(lang):
    """The merge measure said a flaw must be traced "to that reviewer's own finding", silent on duplicates and on scorer 7,
    which changed how a duplicate of several expected findings counts (matching.METHODS)."""
    from sitegen.render.catalogs import load_catalogs
    from sitegen.score.matching import METHODS

    passes = " ".join(dict(sections(read(lang, "measure-REDUCER_SURVIVAL.md")))[SECTIONS[lang][1]].split())
    assert load_catalogs(LOCALES, [lang])[lang].pgettext("category", "duplicate") in passes
    since = min(v for v, method in METHODS.items() if method.survival_through_every_duplicate)
    before = max(v for v, method in METHODS.items() if not method.survival_through_every_duplicate)
    assert f"version {since}" in passes and f"version {before}" in passes


def test_swedish_prose_names_the_missing_flag_as_the_run_pages_reasons_do():
    """The Swedish measures said "besked om huruvida något saknas", the matching heading "Markering av att något saknas",
    the run pages' reasons "markeringen av det som saknas": three names for the one flag the English calls the missing
    flag. Wherever an English file names the missing flag, its Swedish twin uses the reasons' word as often."""
    from sitegen.render.catalogs import load_catalogs

    reason = str(load_catalogs(LOCALES, ["sv"])["sv"].gettext("missing flag differs"))
    word = reason.split()[0].lower().removesuffix("en")  # "markeringen" -> "markering"
    for name in sorted(EXPECTED_FILES):
        english = read("en", name).lower().count("missing flag")
        assert read("sv", name).lower().count(word) >= english, (name, word)
    condition = [heading for heading, _ in sections(read("en", "matching.md"), 2)].index("Missing flag")
    assert sections(read("sv", "matching.md"), 2)[condition][0].lower().startswith(word)
