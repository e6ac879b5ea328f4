"""Synthetic case versions: pseudo-Swedish documents and answer keys whose passages stand in them by construction."""

from __future__ import annotations

import datetime
import random
from dataclasses import dataclass, replace

# Case documents are dated before the first synthetic run.
FIRST_RUN_DATE = datetime.date(2026, 1, 5)
DOCUMENT_TYPES = (
    ("inspection-note", "Inspektionsanteckning"),
    ("decision", "Beslut"),
    ("fee-note", "Avgiftsanteckning"),
)
FIRST_NAMES = ("Anna", "Erik", "Karin", "Lars", "Maja", "Olof", "Sara", "Åsa")
LAST_NAMES = ("Berg", "Lund", "Ström", "Öberg", "Nyström", "Holm")
SUBJECTS = (
    "Inspektören", "Verksamhetsutövaren", "Nämnden", "Sökanden",
    "Kontrollanten", "Fastighetsägaren", "Handläggaren", "Miljöenheten",
)
VERBS = ("konstaterade", "noterade", "bedömde", "kontrollerade", "angav", "redovisade", "påpekade", "bekräftade")
OBJECTS = (
    "att läckan är åtgärdad", "att avgiften gäller för helår", "provtagningen av dricksvattnet",
    "plomberingen vid mätaren", "journalföringen av temperaturer", "ventilationen i köket",
    "förvaringen av kemikalier", "rutinen för egenkontroll", "skyltningen vid entrén",
    "avfallshanteringen på gården", "tonnaget för verksamheten", "att ansökan avslogs",
)
QUALIFIERS = (
    "vid besöket", "utan anmärkning", "enligt protokollet", "i närvaro av ägaren", "efter påpekande",
    "på plats", "för andra gången", "inom angiven tid", "muntligen", "skriftligen i efterhand",
)
# A misquote inserts this word, which no generated document contains.
MISQUOTE_WORD = "inte"
RULES = (
    ("R-ATGARD-2", "Verifierad åtgärd", "Anteckningen ska ange vem som kontrollerade att en brist är åtgärdad."),
    ("R-AVGIFT-3", "Avgiftens grund", "Beslutet ska ange vilket underlag avgiften bygger på."),
    ("R-AVFALL-2", "Avfallshantering", "Anteckningen ska beskriva hur avfallet hanteras och var det förvaras."),
    ("R-DATUM-1", "Datum för besöket", "Anteckningen ska ange datum för besöket."),
    ("R-DELGIV-1", "Delgivning", "Beslutet ska ange hur det delges den det gäller."),
    ("R-EGEN-1", "Egenkontroll", "Anteckningen ska ange om rutinen för egenkontroll följs."),
    ("R-JOURNAL-4", "Temperaturjournal", "Anteckningen ska ange om temperaturer journalförs."),
    ("R-KEMI-1", "Kemikalier", "Anteckningen ska beskriva hur kemikalier förvaras."),
    ("R-MOTIV-2", "Motivering", "Ett avslag ska ange skälen för beslutet."),
    ("R-NAMN-1", "Ansvarig person", "Anteckningen ska ange namnet på den som var närvarande."),
    ("R-PLOMB-1", "Plomber", "Anteckningen ska ange plombernas nummer och skick."),
    ("R-PROV-2", "Provtagning", "Anteckningen ska ange var och på vilket djup provet togs."),
    ("R-SKYLT-1", "Skyltning", "Anteckningen ska ange om skyltningen uppfyller kraven."),
    ("R-TONNAGE-1", "Tonnage", "Ett tonnage ska styrkas med ett namngivet dokument."),
    ("R-VENT-1", "Ventilation", "Anteckningen ska beskriva ventilationens funktion."),
    ("R-TILLSYN-3", "Dokumenterad tillsyn", "Anteckningen ska ange vad som kontrollerades och hur."),
)
@dataclass(frozen=True)
class KeySpec:
    """An expected or prohibited finding together with where its passage stands."""

    id: str
    kind: str
    rules: tuple[str, ...]
    missing: bool
    line: int | None  # None: something wholly absent
    text: str | None  # the sentence as it stands in the document (may hold a double space)
    form: str | None  # which passage fields the key gives: "quote+lines", "quote" or "lines"
    reviewer_expected: bool = True


@dataclass(frozen=True)
class VoluntarySpec:
    rule: str
    line: int | None


@dataclass(frozen=True)
class CaseSpec:
    id: str
    case: str
    variant: str | None
    title: str
    document_type: str
    lines: tuple[tuple[str, ...], ...]  # sentences of each line; line 1 is the heading
    rules: tuple[str, ...]
    expected: tuple[KeySpec, ...]
    prohibited: tuple[KeySpec, ...]
    voluntary: tuple[VoluntarySpec, ...]
    basis: str  # answers of both versions of an invariance pair draw from the same stream

    @property
    def document(self) -> str:
        return "\n".join(" ".join(sentences) for sentences in self.lines)


@dataclass(frozen=True)
class PairSpec:
    id: str
    kind: str
    versions: tuple[str, str]
    detail: str
    rules_differ: bool


def collapse(text: str) -> str:
    """The one whitespace rule: every run of spaces, tabs and line breaks becomes one space."""
    return " ".join(text.split())


def draw_sentence(rng: random.Random, used: set[str]) -> str:
    """A pseudo-Swedish sentence not yet used in the document, so every sentence quote is unique."""
    while True:
        subject = rng.choice(SUBJECTS)
        words = (subject, rng.choice(VERBS), rng.choice(OBJECTS), rng.choice(QUALIFIERS))
        sentence = " ".join(words) + "."
        if sentence in used:
            continue
        used.add(sentence)
        if rng.random() < 0.03:
            # a double space the key quotes collapsed, to exercise whitespace collapsing
            sentence = sentence.replace(" ", "  ", 1)
        return sentence


def draw_key(rng: random.Random, lines: tuple[tuple[str, ...], ...], *, rules: tuple[str, ...],
             clean: bool) -> tuple[tuple[KeySpec, ...], tuple[KeySpec, ...], tuple[VoluntarySpec, ...]]:
    """Expected, prohibited and voluntary findings whose passages are sentences of distinct lines."""
    count = rng.randint(0, 1) if clean else rng.randint(1, 3)
    free_lines = list(range(2, len(lines) + 1))
    rng.shuffle(free_lines)
    expected: list[KeySpec] = []
    for n in range(count):
        kind = "strength" if clean or (n > 0 and rng.random() < 0.3) else "flaw"
        accepted = tuple(rng.sample(rules, 2 if len(rules) > 2 and rng.random() < 0.2 else 1))
        if kind == "flaw" and rng.random() < 0.15:
            expected.append(KeySpec(f"exp-{n + 1}", kind, accepted, True, None, None, None,
                                    reviewer_expected=rng.random() > 0.1))
            continue
        line = free_lines.pop()
        text = rng.choice(lines[line - 1])
        form = rng.choices(("quote+lines", "quote", "lines"), (6, 2, 2))[0]
        missing = kind == "flaw" and rng.random() < 0.5
        expected.append(KeySpec(f"exp-{n + 1}", kind, accepted, missing, line, text, form,
                                reviewer_expected=rng.random() > 0.05))
    prohibited: list[KeySpec] = []
    for n, lure in enumerate(e for e in expected if e.line is not None and rng.random() < 0.3):
        # the finding the case is built to lure out: the opposite verdict on the same passage
        kind = "strength" if lure.kind == "flaw" else "flaw"
        prohibited.append(KeySpec(f"proh-{n + 1}", kind, lure.rules[:1], False, lure.line, lure.text,
                                  rng.choice(("quote", "quote+lines"))))
    voluntary = tuple(VoluntarySpec(rng.choice(rules), rng.choice((None, 1, rng.randint(2, len(lines)))))
                      for _ in range(rng.choice((0, 0, 1, 2))))
    return tuple(expected), tuple(prohibited), voluntary


def draw_case(rng: random.Random, case_id: str, *, clean: bool, rules: tuple[str, ...] | None = None) -> CaseSpec:
    doc_type, heading_word = rng.choice(DOCUMENT_TYPES)
    date = FIRST_RUN_DATE - datetime.timedelta(days=rng.randint(30, 400))
    heading = f"{heading_word} {date.isoformat()}, handläggare {rng.choice(FIRST_NAMES)} {rng.choice(LAST_NAMES)}"
    used: set[str] = set()
    body = tuple(tuple(draw_sentence(rng, used) for _ in range(2 if rng.random() < 0.35 else 1))
                 for _ in range(rng.randint(5, 11)))
    lines = ((heading,),) + body
    rules = rules or tuple(sorted(rng.sample([r[0] for r in RULES], rng.randint(2, 4))))
    expected, prohibited, voluntary = draw_key(rng, lines, rules=rules, clean=clean)
    title = f"Synthetic {doc_type.replace('-', ' ')} {case_id.rsplit('-', 1)[-1]}"
    return CaseSpec(case_id, case_id, None, title, doc_type, lines, rules, expected, prohibited, voluntary, case_id)


def draw_cases(seed: int, count: int) -> tuple[tuple[CaseSpec, ...], tuple[PairSpec, ...]]:
    """Exactly `case_versions` versions: single cases and pairs, about one in ten clean."""
    rng = random.Random(f"{seed}/cases")
    width = max(5, len(str(count)))
    cases: list[CaseSpec] = []
    pairs: list[PairSpec] = []
    n = 0
    while len(cases) < count:
        n += 1
        case_id = f"case-{n:0{width}d}"
        clean = rng.random() < 0.1
        if count - len(cases) < 2 or rng.random() >= 0.12:
            cases.append(draw_case(rng, case_id, clean=clean))
            continue
        first = draw_case(rng, case_id, clean=clean)
        a = replace(first, id=f"{case_id}-a", variant="a", title=first.title + " (a)")
        pair_id = f"pair-{n:0{width}d}"
        kind = rng.choices(("invariance", "contrast", "rules-differ"), (8, 1, 1))[0]
        if kind == "invariance":
            heading = a.lines[0][0].rsplit(", ", 1)[0] + f", handläggare {rng.choice(FIRST_NAMES)} Ekström"
            b = replace(a, id=f"{case_id}-b", variant="b", title=first.title + " (b)",
                        lines=((heading,),) + a.lines[1:])
            pair = PairSpec(pair_id, "invariance", (a.id, b.id), "Which officer is named in the heading.", False)
        elif kind == "contrast":
            other = draw_case(rng, case_id, clean=not clean, rules=a.rules)
            b = replace(other, id=f"{case_id}-b", variant="b", title=first.title + " (b)", basis=f"{case_id}-b")
            pair = PairSpec(pair_id, "contrast", (a.id, b.id), "One version has the flaw, the other does not.",
                            False)
        else:
            extra = next(r[0] for r in RULES if r[0] not in a.rules)
            b = replace(a, id=f"{case_id}-b", variant="b", title=first.title + " (b)",
                        rules=tuple(sorted(a.rules + (extra,))), basis=f"{case_id}-b")
            pair = PairSpec(pair_id, "invariance", (a.id, b.id), f"Version b is also given rule {extra}.", True)
        a = replace(a, basis=a.id if kind != "invariance" else case_id)
        b = b if kind != "invariance" else replace(b, basis=case_id)
        cases.extend((a, b))
        pairs.append(pair)
    return tuple(cases), tuple(pairs)


def passage_json(spec: KeySpec | VoluntarySpec, case: CaseSpec, *, form: str) -> dict | None:
    line = spec.line
    if line is None:
        return None
    text = spec.text if isinstance(spec, KeySpec) else " ".join(case.lines[line - 1])
    passage: dict = {}
    if "quote" in form:
        passage["quote"] = collapse(text)
    if "lines" in form:
        passage["lines"] = [line, line]
    return passage


def key_finding_json(spec: KeySpec, case: CaseSpec, *, expected: bool) -> dict:
    out = {"id": spec.id, "kind": spec.kind, "rules": list(spec.rules), "missing": spec.missing,
           "passage": passage_json(spec, case, form=spec.form) if spec.line is not None else None}
    if expected:
        out["reviewer_expected"] = spec.reviewer_expected
    return out


def case_json(case: CaseSpec) -> dict:
    rule_text = {r[0]: r for r in RULES}
    voluntary = []
    for v in case.voluntary:
        entry: dict = {"rule": v.rule}
        if v.line is not None:
            entry["passage"] = passage_json(v, case, form="lines")
        voluntary.append(entry)
    return {
        "id": case.id, "case": case.case, "variant": case.variant, "title": case.title,
        "document_type": case.document_type, "document": case.document,
        "rules": [{"id": r, "title": rule_text[r][1], "text": rule_text[r][2]} for r in case.rules],
        "key": {
            "expected": [key_finding_json(e, case, expected=True) for e in case.expected],
            "prohibited": [key_finding_json(p, case, expected=False) for p in case.prohibited],
            "voluntary": voluntary,
        },
    }
