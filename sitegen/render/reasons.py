"""What the pages need to word a structured reason (templates/reasons.html.j2): the values a pair comparison reads, classified."""

from __future__ import annotations

from types import MappingProxyType
from typing import Any

from sitegen.score.measures.invariant_pairs import UnexpectedOutput

# which wording of templates/reasons.html.j2 each measure's reasons take: the template names no measure itself
REASON_FORMS = MappingProxyType({
    "GROUNDING": "miss",
    "CLEAN_CASE_FLAWS": "flaws",
    "PROHIBITED_OUTPUT": "prohibited",
    "QUOTE_FIDELITY": "quote",
    "REDUCER_SURVIVAL": "survival",
    "IDENTICAL_INPUT_STABILITY": "repetitions",
    "INVARIANT_PAIRS": "pair",
})
FATES = ("kept", "lost", "changed", "added", "none")  # how an expected finding fared through the merge (invariant_pairs._fate)


def pair_reading(value: Any) -> tuple[str, Any]:
    """(kind, data) of what one version of a pair read for one key, so the template words each kind in the page's language."""
    if isinstance(value, UnexpectedOutput):
        return "unexpected", value.findings
    if isinstance(value, tuple):
        return "found", value  # (kind, missing flag, primary rule)
    if isinstance(value, bool):
        return "other", value
    if isinstance(value, int):
        return "count", value
    if value == "not found":
        return "not found", None
    if value == "not in key":
        return "absent", None
    if value in FATES:
        return "fate", value
    return "other", value
