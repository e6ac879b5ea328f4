"""Which rows of a case-run page an earlier row already shows, so the page links to that row instead of repeating it."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Iterable

from sitegen.core.model import FindingVerdict
from sitegen.render.environment import repetition_anchor
from sitegen.render.passages import passage_lines

if TYPE_CHECKING:
    from sitegen.render.cases import RepetitionInput


def shown_before(reps: Iterable[RepetitionInput], document: str = "") -> tuple[RepetitionInput, ...]:
    """Each repetition with `earlier` filled in, in the order the page shows sections: repetitions, then the answer's
    stages, then the rerun's. A report finding usually repeats the reviewer finding it was merged from, and a repetition
    mostly repeats the one before: such a row links to the first row with the same content, and names its verdict unless
    that row's is the same (the verdict but the finding: category, expected finding, evidence, quote found, duplicates).
    A row that shows its own content but whose excerpt of `document` (passage_lines: the same lines, marked alike) an
    earlier row shows links to that row instead of showing the same lines again. A link to a row of another repetition
    names that repetition: the same finding ids mostly recur in every repetition, and the row of this one with the id
    linked may well be below."""
    first: dict[tuple, tuple[str, str, tuple, int]] = {}  # content -> the first row showing it: id, finding id, verdict, repetition
    first_quote: dict[tuple, tuple[str, str, int]] = {}
    done = []
    for rep in reps:
        if rep.same_as is not None:
            done.append(rep)
            continue
        earlier: dict[tuple[str, str], tuple[str, str, bool, int | None]] = {}
        quoted: dict[tuple[str, str], tuple[str, str, int | None]] = {}
        anchor = repetition_anchor(rep.repetition)
        sections = [(repetition_anchor(rep.repetition, stage), verdict) for stage, verdict in rep.verdicts]
        sections += [(f"{anchor}-rerun-{stage}", verdict) for stage, verdict in rep.rerun_verdicts]
        for section_id, verdict in sections:
            for v in verdict.findings:
                f = v.finding
                content = (f.kind, f.rule, f.supporting_rules, f.missing, f.quote, f.location, f.wording)
                judged = _judged(v)
                row = first.setdefault(content, (f"{section_id}-f-{f.id}", f.id, judged, rep.repetition))
                if row[0] != f"{section_id}-f-{f.id}":
                    earlier[(section_id, f.id)] = (row[0], row[1], row[2] == judged, _other(row[3], rep.repetition))
                elif v.quote_found is not False and (f.quote is not None or f.location is not None):
                    marked = passage_lines(document, f.quote, f.location)
                    mine = (row[0], row[1], row[3])
                    shown = first_quote.setdefault(marked, mine) if marked else mine
                    if shown[0] != row[0]:
                        quoted[(section_id, f.id)] = (shown[0], shown[1], _other(shown[2], rep.repetition))
        done.append(replace(rep, earlier=earlier, quoted=quoted) if earlier or quoted else rep)
    return tuple(done)


def _other(repetition: int, here: int) -> int | None:
    """The repetition a linked row is in, when it is not the linking row's own."""
    return None if repetition == here else repetition


def _judged(v: FindingVerdict) -> tuple:
    """What a finding's row shows of its verdict, by name, so a reordered verdict cannot make two rows seem alike."""
    return (v.category, v.key_finding, v.evidence, v.quote_found, v.duplicate_of)


def repeated(rep: RepetitionInput, earlier: Iterable[RepetitionInput]) -> int | None:
    """The first earlier repetition with the same answer and rerun, judged alike and marked alike, if any.

    Its tables would be the same rows again (verdicts follow from the answer, the key and the scorer); the page shows
    them once and says so. The marks (GROUNDING's result for each first miss) are compared too, as they are part of a row.
    """
    if rep.answer is None or not rep.verdicts:
        return None
    for other in earlier:
        if other.same_as is None and other.answer is not None and other.verdicts == rep.verdicts \
                and other.rerun_verdicts == rep.rerun_verdicts and other.answer.answer == rep.answer.answer \
                and other.answer.rerun == rep.answer.rerun and other.marks == rep.marks:
            return other.repetition
    return None
