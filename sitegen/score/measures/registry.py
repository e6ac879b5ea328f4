"""The registry of the seven measures of METHOD.md: every list, label and reason text elsewhere is derived from it."""

from __future__ import annotations

from types import MappingProxyType
from typing import Mapping

from sitegen.score.measures import (clean_case_flaws, grounding, identical_input_stability, invariant_pairs,
                                    prohibited_output, quote_fidelity, reducer_survival)
from sitegen.score.measures.base import Measure

# in the method's order, which is the order of every list of measures on the site and in the results record
REGISTRY: Mapping[str, Measure] = MappingProxyType({
    module.MEASURE.id: module.MEASURE
    for module in (grounding, clean_case_flaws, prohibited_output, quote_fidelity, reducer_survival, invariant_pairs,
                   identical_input_stability)
})
MEASURES: tuple[str, ...] = tuple(REGISTRY)
MEASURE_FUNCTIONS = MappingProxyType({measure.id: measure.function for measure in REGISTRY.values()})
TITLES = MappingProxyType({measure.id: measure.title for measure in REGISTRY.values()})
EXAMPLE_CASES = MappingProxyType({measure.id: measure.example_case for measure in REGISTRY.values()})
PAIR_MEASURES = frozenset(measure.id for measure in REGISTRY.values() if measure.of_pairs)  # counted in both of a pair
# an observation of these has no one stage (Measure.across_stages): its `stage` field is not shown, nor compared
ACROSS_STAGES = frozenset(measure.id for measure in REGISTRY.values() if measure.across_stages)
INVARIANCE_MEASURE = invariant_pairs.MEASURE.id  # the measure that compares an invariance pair's two versions


def stage_of(measure: str, stage: str) -> str | None:
    """The stage an observation of `measure` recorded at `stage` is shown and compared at: None for a measure that
    observes every stage at once (ACROSS_STAGES), whose recorded stage is only where its first difference was."""
    return None if measure in ACROSS_STAGES else stage


def _reason_words() -> Mapping[str, str]:
    """The page's word (English msgid) of every reason code any measure gives; a code two measures share has one word."""
    words: dict[str, str] = {}
    for measure in REGISTRY.values():
        for text in measure.reasons:
            if words.setdefault(text.code, text.word) != text.word:
                raise ValueError(f"reason {text.code} has two words: {words[text.code]!r} and {text.word!r}")
    return MappingProxyType(words)


REASON_WORDS = _reason_words()
# the page's word of a reason code when the expected finding has no passage, for the codes whose word speaks of one
REASON_WORDS_ABSENT: Mapping[str, str] = MappingProxyType({text.code: text.word_absent for measure in REGISTRY.values()
                                                           for text in measure.reasons if text.word_absent})
