"""The whitespace rule once: where a collapsed quote stands in the original document, for the pages that highlight it."""

import random
import re
from pathlib import Path

from sitegen.core.text import DocumentText

PACKAGE = Path(__file__).resolve().parent.parent / "sitegen"


def regex_span(document: str, quote: str, from_line: int) -> tuple[int, int] | None:
    """The quote as a regex with each whitespace run written [ \\t\\r\\n]+, searched from the start of `from_line`."""
    parts = [re.escape(p) for p in re.split(r"[ \t\r\n]+", quote)]
    if not "".join(parts):
        return None
    start = sum(len(line) + 1 for line in document.split("\n")[: from_line - 1]) if from_line > 1 else 0
    match = re.compile(r"[ \t\r\n]+".join(parts)).search(document, start)
    return (match.start(), match.end()) if match else None


def test_span_is_what_a_whitespace_regex_matches():
    """Odd whitespace, regex characters, starts inside a run and lines past the end included."""
    rng = random.Random(7)
    alphabet = "ab .\t\r\n\f\u00a0*(["
    for _ in range(20000):
        doc = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        a = rng.randint(0, len(doc))
        quote = doc[a : rng.randint(a, len(doc))] if rng.random() < 0.5 else "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 6)))
        quote = re.sub(r"[ \t\r\n]+", lambda _: rng.choice((" ", "\t", "\n ")), quote) if rng.random() < 0.5 else quote
        from_line = rng.randint(0, 6)
        assert DocumentText(doc).span(quote, from_line=from_line) == regex_span(doc, quote, from_line), (doc, quote, from_line)


def test_span_maps_collapsed_runs_back_to_the_original_characters():
    text = DocumentText("Läckan är  åtgärdad.\n\n  Nästa \t rad")
    assert text.span("är åtgärdad.") == (7, 20)
    assert text.span("åtgärdad. Nästa") == (11, 29)  # the run "\n\n  " is one space
    assert text.span(" Nästa", from_line=3) == (22, 29)  # from line 3's start, inside the run
    assert text.span("Läckan", from_line=2) is None  # only before line 2
    assert text.span(" \t\n") is None  # only whitespace quotes nothing


def test_the_whitespace_rule_is_written_once():
    """One rule in one place: no module but core/text.py spells out the whitespace characters METHOD.md collapses."""
    spelled = re.compile(r"""["'][^"'\n]*(\\t\\r\\n|\[ \\t\\r\\n\]| \\t\\r\\n)""")
    elsewhere = [str(p.relative_to(PACKAGE)) for p in sorted(PACKAGE.rglob("*.py"))
                 if p.name != "text.py" and spelled.search(p.read_text(encoding="utf-8"))]
    assert not elsewhere, f"a second copy of the whitespace rule: {elsewhere}"
