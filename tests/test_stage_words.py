"""A stage's heading word ("Reviewers", "Delivered report") heads its section and starts a line; named inside a
sentence, in a list of differences or of observations, the stage is written in lower case, in both languages."""

import re
from pathlib import Path

import pytest

from sitegen.build import build_site

RECORDS = Path(__file__).resolve().parent.parent / "records"
HEADING = {"en": ("Reviewers", "Delivered report"), "sv": ("Granskare", "Levererad rapport")}
IN_TEXT = {"en": ("reviewers", "delivered report"), "sv": ("granskare", "levererad rapport")}
AND = {"en": "and", "sv": "och"}


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("stage-words") / "site"
    build_site(RECORDS, out)
    return out


def text_of(html: str) -> str:
    """The page's text as a reader reads it: tags left out, so a linked stage reads as the words around it."""
    return re.sub(r"<[^>]*>", "", html)


def mid_sentence(words: tuple[str, ...], lang: str) -> re.Pattern:
    """A stage word after a comma, a colon, an arrow or "and": inside a sentence, never at its start."""
    names = "|".join(map(re.escape, words))
    return re.compile(rf"(?:[,:→] |\b{AND[lang]} )({names})\b")


@pytest.mark.parametrize("lang", ["en", "sv"])
def test_a_stage_named_inside_a_sentence_is_lower_case_and_its_heading_keeps_its_capital(site, lang):
    pages = sorted((site / lang / "runs").rglob("*.html")) + sorted(
        p for p in (site / lang / "cases").rglob("*.html") if p.name != "index.html")
    capitalized, lower = [], 0
    for page in pages:
        html = page.read_text(encoding="utf-8")
        text = text_of(html)
        capitalized += [f"{page.relative_to(site)}: …{text[max(0, m.start() - 60):m.end()]}"
                        for m in mid_sentence(HEADING[lang], lang).finditer(text)]
        lower += len(mid_sentence(IN_TEXT[lang], lang).findall(text))
    assert not capitalized, "\n".join(capitalized[:10])
    assert lower > 0, "the pages name stages inside sentences"
    # the run page's list of what makes runs incomparable names the stages each run scored
    nightly = text_of((site / lang / "runs" / "2026-09-02-nightly.html").read_text(encoding="utf-8"))
    reviewers, report = IN_TEXT[lang]
    assert f": {reviewers} → {reviewers}, {report};" in nightly
    # a stage's section is still headed by its heading word
    case_run = (site / lang / "cases" / "ap" / "appeal-info-missing" / "2026-09-02-nightly.html").read_text(encoding="utf-8")
    assert all(f"<h3>{word}</h3>" in case_run for word in HEADING[lang])
