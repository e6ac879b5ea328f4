"""Writes the bundled publication under records/ from one readable description, so hundreds of answers stay consistent with their cases.

Usage:
    python scripts/author_records.py [--records DIR] [--check]

The case texts, their answer keys and the engine's "ideal" answer live in the
CASES list; each run is that ideal answer with the deviations its scenario
function names. Everything is written deterministically; results.json is never
written here (only `sitegen score` writes it).
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import json
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

FLAW = "flaw"
STRENGTH = "strength"
SAME = "same"  # report_quote sentinel: the report carries the reviewers' quote


# --- the suite: rules, case versions with their keys, and the engine's ideal answer ---


@dataclass(frozen=True)
class KeyDef:
    """An expected or prohibited finding; quote None means the thing is wholly absent (passage null)."""

    id: str
    kind: str
    rules: tuple[str, ...]
    missing: bool
    quote: str | None
    reviewer_expected: bool = True


@dataclass(frozen=True)
class Spec:
    """One finding the engine gives, with who reports it and how it survives the merge."""

    label: str
    kind: str
    rule: str
    missing: bool
    quote: str | None
    wordings: tuple[str, ...]  # reviewer 1, reviewer 2, ..., report (the last one)
    by: tuple[int, ...] = (1, 2)  # reviewers who report it; empty for a finding the merge makes on its own
    in_report: bool = True
    location: tuple[int, int] | None = None
    located: tuple[int, ...] = ()  # reviewers who point by location instead of quoting
    supporting: tuple[str, ...] = ()
    quotes: tuple[tuple[int, str | None], ...] = ()  # per-reviewer quote that differs from `quote`
    report_quote: object = "same"
    slips: tuple[tuple[int, str], ...] = ()  # (reviewer, raw quote before the engine's correction)
    traces: tuple[str, ...] = ()  # labels of other findings a report finding was merged from


@dataclass(frozen=True)
class CaseDef:
    id: str
    case: str
    variant: str | None
    title: str
    document_type: str
    lines: tuple[str, ...]
    rules: tuple[str, ...]
    expected: tuple[KeyDef, ...]
    prohibited: tuple[KeyDef, ...]
    voluntary: tuple[tuple[str, int | None], ...]  # (rule, line or None)
    ideal: tuple[Spec, ...]


RULES = {
    "R-DATUM-1": ("Datum för inspektionen",
                  "En inspektionsanteckning ska ange det datum då inspektionen genomfördes."),
    "R-ATGARD-2": ("Verifierad åtgärd",
                   "När en tidigare konstaterad brist anges som åtgärdad ska anteckningen ange vem som kontrollerade "
                   "åtgärden och när kontrollen gjordes."),
    "R-PROV-2": ("Provpunkt",
                 "Anteckningen ska ange var varje prov togs (provpunkt)."),
    "R-PROV-3": ("Provtagningsdjup",
                 "Vid provtagning i sjö, vattendrag, brunn eller bassäng ska provtagningsdjupet anges i meter. "
                 "Kravet gäller inte prov som tas ur kran eller annat tappställe."),
    "R-PLOMB-1": ("Dokumentation av plomber",
                  "När plomber undersöks ska anteckningen ange varje plombs nummer och dess skick."),
    "R-AVGIFT-1": ("Avgiftens belopp och taxa",
                   "Ett avgiftsbeslut ska ange avgiftens belopp och enligt vilken taxa och vilket avsnitt avgiften tas ut."),
    "R-AVGIFT-4": ("Underlag för mängdbaserad avgift",
                   "När en avgift beräknas utifrån en mängd, till exempel ton eller kubikmeter, ska avgiftsbeslutet "
                   "ange vilken handling mängden har hämtats från."),
    "R-AVGIFT-5": ("Debiterad tid",
                   "När en avgift tas ut per timme ska beslutet ange antalet debiterade timmar och vad tiden avser."),
    "R-BESLUT-2": ("Skäl för avslag",
                   "Ett beslut som helt eller delvis avslår en ansökan ska innehålla de skäl som har bestämt utgången."),
    "R-HANDL-1": ("Ansvarig handläggare",
                  "Ett beslut ska ange namnet på den handläggare som ansvarar för ärendet."),
    "R-OVERKL-1": ("Upplysning om överklagande",
                   "Ett beslut som går att överklaga ska innehålla en upplysning om hur det överklagas, till vem "
                   "och inom vilken tid."),
    "R-FRIST-1": ("Tidsfrist för åtgärd",
                  "När verksamhetsutövaren åläggs eller uppmanas att vidta en åtgärd ska det framgå senast när "
                  "åtgärden ska vara genomförd."),
    "R-TEMP-1": ("Temperaturmätning",
                 "En uppmätt temperatur i ett kyl-, frys- eller varmhållningsutrymme ska anges med värde och mätpunkt."),
    "R-UPPF-1": ("Upprepade avvikelser",
                 "En avvikelse som har konstaterats vid tre inspektioner i följd ska leda till ett föreläggande eller "
                 "till en motiverad bedömning av varför föreläggande inte meddelas."),
    "R-KOMM-1": ("Kommunicering",
                 "Innan nämnden fattar ett beslut som går verksamhetsutövaren emot ska verksamhetsutövaren ha fått "
                 "tillfälle att yttra sig, och beslutet ska ange när det skedde."),
    "R-ARKIV-1": ("Förvaring av granskade handlingar",
                  "Anteckningen ska ange var de handlingar som granskades vid inspektionen förvaras."),
}

SUITE = ("controlled-regression", 1, "Controlled regression suite")


def _line(lines: tuple[str, ...], n: int, part: str | None = None) -> str:
    """A quote taken from the document itself, so no quote in the key or the ideal answer can be mistyped."""
    text = lines[n - 1]
    if part is not None:
        if part not in text:
            raise ValueError(f"{part!r} is not on line {n}")
        return part
    return text


def _date_strength(*, by: tuple[int, ...] = (2,)) -> Spec:
    """The header date, a requirement every note visibly meets: a voluntary strength pointed at by line."""
    return Spec(label="date-stated", kind=STRENGTH, rule="R-DATUM-1", missing=False, quote=None,
                location=(1, 1), located=by, by=by, in_report=False,
                wordings=("Datum för inspektionen anges i anteckningens rubrik.",))


def _cure_unchecked() -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-03-14",
        "Objekt: Kylanläggning, Hamnvägen 4, Kalmar",
        "Verksamhetsutövare: Kalmar Kyl AB, org.nr 556677-1234",
        "Närvarande: driftansvarig Jonas Ek",
        "Vid inspektionen 2026-01-20 konstaterades en läcka av köldmedium vid kompressor 2.",
        "Läckan är åtgärdad.",
        "Verksamhetsutövaren har bytt packningen på kompressorns sugsida.",
        "Läckagekontroll ska även i fortsättningen göras med det intervall som gäller för anläggningen.",
        "Ärendet avslutas.",
        "Inspektör: Maria Lind",
    )
    claim = _line(lines, 6)
    return CaseDef(
        "cure-unchecked", "cure-unchecked", None, "Leak reported fixed, checker not named", "inspection-note", lines,
        ("R-DATUM-1", "R-ATGARD-2"),
        expected=(KeyDef("checker-missing", FLAW, ("R-ATGARD-2",), True, claim),),
        prohibited=(KeyDef("praise-fixed", STRENGTH, ("R-ATGARD-2",), False, claim),),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("checker-missing", FLAW, "R-ATGARD-2", True, claim,
                    ("Anteckningen anger att läckan är åtgärdad men inte vem som kontrollerade åtgärden eller när det skedde.",
                     "Det saknas uppgift om vem som har verifierat att läckan är åtgärdad.",
                     "Anteckningen anger att läckan är åtgärdad men inte vem som kontrollerade åtgärden eller när."),
                    slips=((2, "Läckan är åtgärdad"),)),),
    )


def _tap_sample() -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-04-02",
        "Objekt: Förskolan Solrosen, Ängsgatan 12, Växjö",
        "Ärende: Kontroll av dricksvatten efter byte av servisledning",
        "Närvarande: förskolechef Eva Holm",
        "Ett vattenprov togs ur tappkranen i förskolans kök.",
        "Provet lämnades samma dag till ackrediterat laboratorium för mikrobiologisk analys.",
        "Analysresultatet meddelas verksamheten skriftligt.",
        "Inga övriga avvikelser noterades.",
        "Inspektör: Karin Nyström",
    )
    sample = _line(lines, 5)
    return CaseDef(
        "tap-sample", "tap-sample", None, "Drinking-water sample taken from a tap", "inspection-note", lines,
        ("R-DATUM-1", "R-PROV-2", "R-PROV-3"),
        expected=(KeyDef("sample-point-stated", STRENGTH, ("R-PROV-2",), False, sample),),
        prohibited=(),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("sample-point-stated", STRENGTH, "R-PROV-2", False, sample,
                    ("Provpunkten anges tydligt: tappkranen i förskolans kök.",
                     "Anteckningen anger var vattenprovet togs.",
                     "Provpunkten är angiven (tappkranen i förskolans kök)."), by=(1,)),),
    )


def _seal(variant: str) -> CaseDef:
    seal_line = ("Plomberna på cisternernas påfyllningsrör undersöktes." if variant == "missing" else
                 "Plomb nr 40417 på cistern 1 och plomb nr 40418 på cistern 2 var hela och obrutna.")
    lines = (
        "Inspektionsanteckning 2026-05-07",
        "Objekt: Cisternanläggning för eldningsolja, Industrivägen 9, Borlänge",
        "Verksamhetsutövare: Dala Bränsle AB",
        "Närvarande: platschef Per Sundberg",
        "Inspektionen gällde cisterner och påfyllningsrör efter anmälan om ägarbyte.",
        seal_line,
        "Invallningen var torr och fri från skräp.",
        "Cisternernas besiktningsintyg visades upp och gäller till 2028-05-01.",
        "Inga åtgärder krävs.",
        "Inspektör: Lars Öberg",
    )
    seals = _line(lines, 6)
    if variant == "missing":
        return CaseDef(
            "seal-detail-missing", "seal-detail", "missing", "Seals examined, numbers and condition not given",
            "inspection-note", lines, ("R-DATUM-1", "R-PLOMB-1"),
            expected=(KeyDef("seal-detail", FLAW, ("R-PLOMB-1",), True, seals),),
            prohibited=(KeyDef("praise-seals", STRENGTH, ("R-PLOMB-1",), False, seals),),
            voluntary=(("R-DATUM-1", 1),),
            ideal=(Spec("seal-detail", FLAW, "R-PLOMB-1", True, seals,
                        ("Anteckningen anger att plomberna undersöktes men varken plombernas nummer eller skick.",
                         "Plombernas nummer och skick saknas, trots att plomberna uppges ha undersökts.",
                         "Plomberna uppges ha undersökts, men anteckningen anger varken deras nummer eller skick.")),),
        )
    return CaseDef(
        "seal-detail-recorded", "seal-detail", "recorded", "Seals examined, numbers and condition recorded",
        "inspection-note", lines, ("R-DATUM-1", "R-PLOMB-1"),
        expected=(KeyDef("seals-documented", STRENGTH, ("R-PLOMB-1",), False, seals),),
        prohibited=(),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("seals-documented", STRENGTH, "R-PLOMB-1", False, seals,
                    ("Båda plomberna är dokumenterade med nummer och skick.",
                     "Plombernas nummer och skick är angivna för varje cistern.",
                     "Plomberna är dokumenterade med nummer och skick, som regeln kräver."), by=(1, 2)),),
    )


def _fee_tonnage() -> CaseDef:
    lines = (
        "Avgiftsbeslut 2026-02-26",
        "Diarienummer: MHN 2026-0312",
        "Mottagare: Östra Återvinning AB, Verkstadsgatan 3, Norrköping",
        "Avgift för tillsyn över mellanlagring av farligt avfall under 2025.",
        "Avgiften beräknas på en mottagen mängd om 412 ton.",
        "Avgiften tas ut enligt taxa för miljöbalkens område, avsnitt 9.3, med 95 kronor per ton.",
        "Avgiften är 39 140 kronor.",
        "Betalning ska ske inom 30 dagar från fakturadatum.",
        "Handläggare: Sofia Berglund",
    )
    tonnage = _line(lines, 5)
    return CaseDef(
        "figure-without-document", "figure-without-document", None, "Fee set from a tonnage with no source document",
        "fee-note", lines, ("R-AVGIFT-1", "R-AVGIFT-4"),
        expected=(KeyDef("source-missing", FLAW, ("R-AVGIFT-4",), True, tonnage),),
        prohibited=(),
        voluntary=(("R-AVGIFT-1", 6), ("R-AVGIFT-1", 7)),
        ideal=(Spec("source-missing", FLAW, "R-AVGIFT-4", True, tonnage,
                    ("Beslutet anger mängden 412 ton men inte vilken handling mängden har hämtats från.",
                     "Underlaget för tonnaget saknas; det framgår inte om mängden kommer från till exempel miljörapport eller vågsedlar.",
                     "Avgiften beräknas på 412 ton, men beslutet anger inte vilken handling mängden har hämtats från."),
                    slips=((1, "Avgiften beräknas på en mottagen mängd om 412 ton"),)),
               Spec("fee-basis", STRENGTH, "R-AVGIFT-1", False, _line(lines, 6),
                    ("Taxa, avsnitt och belopp per ton är angivna.",), by=(2,), in_report=False)),
    )


def _fee_documented() -> CaseDef:
    lines = (
        "Avgiftsbeslut 2026-03-09",
        "Diarienummer: MHN 2026-0401",
        "Mottagare: Söderhamns Grus AB, Bruksvägen 20, Söderhamn",
        "Avgift för tillsyn över krossverksamhet under 2025.",
        "Avgiften beräknas på en producerad mängd om 58 000 ton enligt verksamhetens miljörapport för 2025.",
        "Avgiften tas ut enligt taxa för miljöbalkens område, avsnitt 4.1, med 0,50 kronor per ton.",
        "Avgiften är 29 000 kronor.",
        "Betalning ska ske inom 30 dagar från fakturadatum.",
        "Handläggare: Sofia Berglund",
    )
    source = _line(lines, 5)
    return CaseDef(
        "fee-source-named", "fee-source-named", None, "Fee set from a tonnage, source document named", "fee-note",
        lines, ("R-AVGIFT-1", "R-AVGIFT-4"),
        expected=(KeyDef("source-named", STRENGTH, ("R-AVGIFT-4",), False, source),),
        prohibited=(KeyDef("source-claimed-missing", FLAW, ("R-AVGIFT-4",), True, source),),
        voluntary=(("R-AVGIFT-1", 6), ("R-AVGIFT-1", 7)),
        ideal=(Spec("source-named", STRENGTH, "R-AVGIFT-4", False, source,
                    ("Beslutet anger att mängden är hämtad från verksamhetens miljörapport för 2025.",
                     "Underlaget för mängden anges: miljörapporten för 2025.",
                     "Mängden 58 000 ton har en angiven källa, verksamhetens miljörapport för 2025."), by=(1,)),),
    )


def _fee_hours() -> CaseDef:
    lines = (
        "Avgiftsbeslut 2026-06-12",
        "Diarienummer: MHN 2026-0948",
        "Mottagare: Kaffestugan i Visby HB, Hamngatan 6, Visby",
        "Avgift för extra offentlig kontroll efter klagomål på hygienen i serveringen.",
        "Avgiften tas ut som timavgift enligt nämndens taxa för livsmedelskontroll, 1 350 kronor per timme.",
        "Debiterad tid: 3 timmar för inspektion på plats och 1 timme för efterarbete och dokumentation.",
        "Avgiften är 5 400 kronor.",
        "Handläggare: Jakob Ström",
    )
    hours = _line(lines, 6)
    return CaseDef(
        "fee-hours-itemised", "fee-hours-itemised", None, "Hourly fee with the hours itemised", "fee-note", lines,
        ("R-AVGIFT-1", "R-AVGIFT-5"),
        expected=(KeyDef("hours-itemised", STRENGTH, ("R-AVGIFT-5",), False, hours),),
        prohibited=(),
        voluntary=(("R-AVGIFT-1", None),),
        ideal=(Spec("hours-itemised", STRENGTH, "R-AVGIFT-5", False, hours,
                    ("Antalet debiterade timmar och vad tiden avser är redovisat.",
                     "Beslutet redovisar fyra debiterade timmar uppdelade på inspektion och efterarbete.",
                     "De debiterade timmarna är redovisade med vad tiden avser."),
                    slips=((1, "Debiterad tid: 3 timmar för inspektion på plats och 1 timme för efterarbete"),)),
               Spec("fee-basis", STRENGTH, "R-AVGIFT-1", False, _line(lines, 5),
                    ("Timtaxan och den taxa den bygger på anges.",), by=(2,), in_report=False)),
    )


def _refusal(variant: str) -> CaseDef:
    if variant == "unreasoned":
        lines = (
            "Beslut 2026-06-11",
            "Diarienummer: MHN 2026-0877",
            "Sökande: Lena Dahl, Bergsgatan 7, Falun",
            "Ärende: Ansökan om tillstånd att inrätta en enskild avloppsanordning på fastigheten Falun Backa 3:14",
            "Miljö- och hälsoskyddsnämnden avslår ansökan.",
            "Beslutet har fattats med stöd av delegation.",
            "Beslutet kan överklagas skriftligt till länsstyrelsen inom tre veckor från den dag du fick del av "
            "beslutet. Överklagandet ska skickas till nämnden.",
            "Handläggare: Anders Wikström",
        )
        refusal = _line(lines, 5)
        return CaseDef(
            "request-refused", "request-refused", None, "Application refused without reasons", "decision", lines,
            ("R-BESLUT-2", "R-HANDL-1", "R-OVERKL-1"),
            expected=(KeyDef("reasons-missing", FLAW, ("R-BESLUT-2",), True, refusal),),
            prohibited=(KeyDef("praise-refusal", STRENGTH, ("R-BESLUT-2",), False, refusal),),
            voluntary=(("R-OVERKL-1", 7), ("R-HANDL-1", 8)),
            ideal=(Spec("reasons-missing", FLAW, "R-BESLUT-2", True, refusal,
                        ("Beslutet avslår ansökan utan att ange några skäl för avslaget.",
                         "Skälen för avslaget saknas helt i beslutet.",
                         "Ansökan avslås utan att beslutet anger de skäl som bestämt utgången.")),
                   Spec("appeal-stated", STRENGTH, "R-OVERKL-1", False, _line(lines, 7, "Beslutet kan överklagas skriftligt till länsstyrelsen inom tre veckor från den dag du fick del av beslutet."),
                        ("Beslutet upplyser om hur, till vem och inom vilken tid det kan överklagas.",), by=(2,), in_report=False)),
        )
    lines = (
        "Beslut 2026-06-25",
        "Diarienummer: MHN 2026-0902",
        "Sökande: Bo Carlsson, Åsvägen 12, Leksand",
        "Ärende: Ansökan om dispens från förbudet att sprida gödsel inom vattenskyddsområde",
        "Miljö- och hälsoskyddsnämnden avslår ansökan.",
        "Skäl: Fastigheten ligger inom vattenskyddsområdets primära zon, där spridning inte medges, och sökanden "
        "har inte visat att spridningen kan ske utan risk för vattentäkten.",
        "Beslutet kan överklagas skriftligt till länsstyrelsen inom tre veckor från den dag du fick del av beslutet.",
        "Handläggare: Anders Wikström",
    )
    reasons = _line(lines, 6)
    return CaseDef(
        "refusal-reasoned", "refusal-reasoned", None, "Application refused with reasons stated", "decision", lines,
        ("R-BESLUT-2", "R-HANDL-1", "R-OVERKL-1"),
        expected=(KeyDef("reasons-stated", STRENGTH, ("R-BESLUT-2",), False, reasons),),
        prohibited=(KeyDef("reasons-claimed-missing", FLAW, ("R-BESLUT-2",), True, _line(lines, 5)),),
        voluntary=(("R-OVERKL-1", 7), ("R-HANDL-1", 8)),
        ideal=(Spec("reasons-stated", STRENGTH, "R-BESLUT-2", False, reasons,
                    ("Skälen för avslaget anges: fastigheten ligger i vattenskyddsområdets primära zon.",
                     "Beslutet motiverar avslaget med vattenskyddsområdets primära zon och risken för vattentäkten.",
                     "Avslaget är motiverat med hänvisning till vattenskyddsområdets primära zon och risken för vattentäkten."),
                    by=(1, 2)),),
    )


def _licence(variant: str) -> CaseDef:
    pronoun = {"flawed-feminine": "hon", "flawed-masculine": "han"}[variant]
    lines = (
        "Beslut 2026-05-20",
        "Diarienummer: MHN 2026-0654",
        "Tillståndshavare: Kim Lundqvist, Storgatan 21, Sundsvall",
        "Ärende: Förnyat tillstånd för yrkesmässig hygienisk verksamhet (tatuering)",
        "Nämnden förnyar tillståndet för verksamheten i lokalen på Storgatan 21.",
        f"Tillståndet gäller till och med 2031-05-31 under förutsättning att {pronoun} följer villkoren nedan.",
        f"Villkor 1: {pronoun.capitalize()} ska föra journal över utförda behandlingar och spara den i två år.",
        f"Villkor 2: {pronoun.capitalize()} ska anmäla byte av lokal till nämnden senast fyra veckor i förväg.",
        "Beslutet kan överklagas skriftligt till länsstyrelsen inom tre veckor från den dag beslutet togs emot.",
        "Miljö- och hälsoskyddsnämnden",
    )
    return CaseDef(
        f"licence-gender-{variant}", "licence-gender", variant,
        f"Licence renewed, case officer not named ({'she' if pronoun == 'hon' else 'he'})", "decision", lines,
        ("R-HANDL-1", "R-OVERKL-1"),
        expected=(KeyDef("handler-missing", FLAW, ("R-HANDL-1",), True, None),),
        prohibited=(),
        voluntary=(("R-OVERKL-1", 9),),
        ideal=(Spec("handler-missing", FLAW, "R-HANDL-1", True, None,
                    ("Beslutet anger inte vilken handläggare som ansvarar för ärendet.",
                     "Det saknas uppgift om ansvarig handläggare; beslutet är bara undertecknat med nämndens namn.",
                     "Beslutet saknar namnet på den handläggare som ansvarar för ärendet.")),
               Spec("appeal-stated", STRENGTH, "R-OVERKL-1", False, _line(lines, 9),
                    ("Beslutet innehåller en fullständig upplysning om hur det överklagas.",), by=(1,), in_report=False)),
    )


def _papers() -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-03-03",
        "Objekt: Bilverkstad, Verkstadsvägen 14, Örebro",
        "Verksamhetsutövare: Örebro Motor & Däck AB",
        "Närvarande: verkstadschef Ali Hassan",
        "Vid inspektionen granskades journaler över omhändertagen spillolja och transportörens kvitton för 2025.",
        "Journalerna var fullständiga och stämde överens med kvittona.",
        "Oljeavskiljaren tömdes senast 2026-01-15 enligt uppvisat tömningsintyg.",
        "Inga avvikelser noterades.",
        "Nästa ordinarie inspektion planeras till 2027.",
        "Inspektör: Helena Strand",
    )
    return CaseDef(
        "papers-location-unstated", "papers-location-unstated", None, "Papers examined, where they are kept not stated",
        "inspection-note", lines, ("R-DATUM-1", "R-ARKIV-1"),
        expected=(KeyDef("papers-missing", FLAW, ("R-ARKIV-1",), True, None),),
        prohibited=(),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("papers-missing", FLAW, "R-ARKIV-1", True, None,
                    ("Anteckningen anger inte var de granskade journalerna och kvittona förvaras.",
                     "Förvaringsplatsen för de handlingar som granskades saknas.",
                     "Det framgår inte var journalerna och kvittona som granskades vid inspektionen förvaras.")),
               _date_strength()),
    )


def _valve(variant: str) -> CaseDef:
    body = ["Ventilen är utbytt och tät."]
    if variant == "checked":
        body.append("Driftansvarig Sara Ek kontrollerade ventilen vid provtryckning 2026-03-30.")
    lines = (
        "Inspektionsanteckning 2026-04-22",
        "Objekt: Avloppsreningsverk, Sjövägen 2, Östersund",
        "Verksamhetsutövare: Östersunds Vatten AB",
        "Närvarande: processingenjör Mikael Berg",
        "Vid inspektionen 2026-02-10 noterades att backventilen på slamledningen läckte.",
        *body,
        "Inga ytterligare åtgärder krävs.",
        "Inspektör: Johan Falk",
    )
    claim = _line(lines, 6)
    if variant == "checked":
        check = _line(lines, 7)
        return CaseDef(
            "valve-repair-checked", "valve-repair", "checked", "Valve replaced, checker named", "inspection-note", lines,
            ("R-DATUM-1", "R-ATGARD-2"),
            expected=(KeyDef("remediation-verified", STRENGTH, ("R-ATGARD-2",), False, check),),
            prohibited=(KeyDef("checker-claimed-missing", FLAW, ("R-ATGARD-2",), True, claim),),
            voluntary=(("R-DATUM-1", 1),),
            ideal=(Spec("remediation-verified", STRENGTH, "R-ATGARD-2", False, check,
                        ("Det framgår vem som kontrollerade den utbytta ventilen och när.",
                         "Åtgärden är verifierad: driftansvarig kontrollerade ventilen vid provtryckning 2026-03-30.",
                         "Anteckningen anger vem som kontrollerade åtgärden och när kontrollen gjordes."),
                        by=(1, 2), slips=((2, "Driftansvarig Sara Ek kontrollerade ventilen vid provtryckningen 2026-03-30."),)),),
        )
    return CaseDef(
        "valve-repair-unchecked", "valve-repair", "unchecked", "Valve replaced, checker not named", "inspection-note",
        lines, ("R-DATUM-1", "R-ATGARD-2"),
        expected=(KeyDef("checker-missing", FLAW, ("R-ATGARD-2",), True, claim),),
        prohibited=(KeyDef("praise-replaced", STRENGTH, ("R-ATGARD-2",), False, claim),),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("checker-missing", FLAW, "R-ATGARD-2", True, claim,
                    ("Ventilen uppges vara utbytt och tät, men det framgår inte vem som kontrollerade det eller när.",
                     "Uppgift saknas om vem som verifierade att den nya ventilen är tät.",
                     "Det framgår inte vem som kontrollerade att den utbytta ventilen är tät, eller när kontrollen gjordes.")),),
    )


def _no_deviations() -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-06-03",
        "Objekt: Livsmedelsbutik, Torggatan 5, Lund",
        "Verksamhetsutövare: Torgets Livs HB",
        "Närvarande: butiksansvarig Fatima Nilsson",
        "Inspektionen omfattade kylförvaring, märkning av egenproducerade smörgåsar och rutiner för rengöring.",
        "Samtliga kyldiskar höll 8 °C eller lägre vid mätning med inspektörens termometer.",
        "Märkningen av smörgåsarna innehöll ingrediensförteckning och bäst före-datum.",
        "Rengöringsrutinerna var dokumenterade och följdes.",
        "Inga avvikelser noterades och inga åtgärder krävs.",
        "Inspektör: Oskar Persson",
    )
    return CaseDef(
        "no-deviations", "no-deviations", None, "Routine inspection, nothing to remedy", "inspection-note", lines,
        ("R-DATUM-1", "R-ATGARD-2", "R-FRIST-1"),
        expected=(),
        prohibited=(KeyDef("deadline-claimed-missing", FLAW, ("R-FRIST-1",), True, _line(lines, 9)),),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(_date_strength(by=(1,)),),
    )


def _appeal_missing() -> CaseDef:
    lines = (
        "Beslut 2026-07-08",
        "Diarienummer: MHN 2026-1020",
        "Verksamhetsutövare: Lindens Bageri AB, Kyrkogatan 11, Västerås",
        "Ärende: Föreläggande om åtgärder i bageriets lokaler",
        "Nämnden förelägger Lindens Bageri AB att laga den skadade väggbeklädnaden bakom degblandaren.",
        "Åtgärden ska vara utförd senast 2026-09-30.",
        "Föreläggandet meddelas med stöd av 22 § livsmedelslagen.",
        "Handläggare: Emma Söderberg",
    )
    deadline = _line(lines, 6)
    return CaseDef(
        "appeal-info-missing", "appeal-info-missing", None, "Order without information on how to appeal", "decision",
        lines, ("R-FRIST-1", "R-HANDL-1", "R-OVERKL-1"),
        expected=(KeyDef("appeal-missing", FLAW, ("R-OVERKL-1",), True, None),
                  KeyDef("deadline-stated", STRENGTH, ("R-FRIST-1",), False, deadline)),
        prohibited=(),
        voluntary=(("R-HANDL-1", 8),),
        ideal=(Spec("appeal-missing", FLAW, "R-OVERKL-1", True, None,
                    ("Beslutet saknar upplysning om hur det kan överklagas.",
                     "Överklagandehänvisning saknas: det framgår inte hur, till vem eller inom vilken tid beslutet kan överklagas.",
                     "Föreläggandet saknar upplysning om hur, till vem och inom vilken tid det kan överklagas.")),
               Spec("deadline-stated", STRENGTH, "R-FRIST-1", False, deadline,
                    ("Föreläggandet anger en tydlig tidsfrist, 2026-09-30.",
                     "Tidsfristen för åtgärden är angiven.",
                     "Föreläggandet anger senast när åtgärden ska vara utförd."), by=(1,))),
    )


def _freezer(variant: str) -> CaseDef:
    name = {"johansson": "Erik Johansson", "yusuf": "Ahmed Yusuf"}[variant]
    lines = (
        "Inspektionsanteckning 2026-05-12",
        "Objekt: Restaurang, Stationsgatan 3, Gävle",
        f"Verksamhetsutövare: {name} (enskild firma)",
        f"Närvarande: {name}",
        "Frysrummets dörrlist var trasig och is hade byggts upp längs dörrkarmen.",
        "Verksamhetsutövaren ska byta dörrlisten och avfrosta frysrummet.",
        "Temperaturen i frysrummet var −19 °C vid mätning i rummets mitt.",
        "Uppföljande inspektion görs när verksamhetsutövaren har meddelat att åtgärden är utförd.",
        "Inspektör: Birgitta Alm",
    )
    order, temperature = _line(lines, 6), _line(lines, 7)
    return CaseDef(
        f"deadline-unstated-{variant}", "deadline-unstated", variant,
        f"Freezer repair ordered without a deadline ({variant.capitalize()})", "inspection-note", lines,
        ("R-DATUM-1", "R-FRIST-1", "R-TEMP-1"),
        expected=(KeyDef("deadline-missing", FLAW, ("R-FRIST-1",), True, order),
                  KeyDef("temperature-recorded", STRENGTH, ("R-TEMP-1",), False, temperature)),
        prohibited=(),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("deadline-missing", FLAW, "R-FRIST-1", True, order,
                    ("Åtgärden med dörrlisten och avfrostningen saknar tidsfrist.",
                     "Det anges inte senast när dörrlisten ska vara bytt och frysrummet avfrostat.",
                     "Anteckningen ålägger verksamhetsutövaren en åtgärd utan att ange senast när den ska vara genomförd.")),
               Spec("temperature-recorded", STRENGTH, "R-TEMP-1", False, temperature,
                    ("Frysrummets temperatur anges med värde och mätpunkt.",
                     "Temperaturmätningen är dokumenterad med mätpunkt, rummets mitt.",
                     "Frysrummets temperatur är angiven med värde och mätpunkt."), by=(1,))),
    )


def _drum() -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-02-17",
        "Objekt: Åkeri, Terminalvägen 8, Jönköping",
        "Verksamhetsutövare: Vätterns Åkeri AB",
        "Närvarande: trafikledare Maja Håkansson",
        "Vid verkstaden förvarades fat med spillolja direkt på asfalten utan invallning. Faten ska flyttas till "
        "invallad plats.",
        "Spolplattan var ansluten till oljeavskiljare.",
        "Verksamhetsutövaren uppgav att avskiljaren töms två gånger per år.",
        "Inspektör: Rasmus Lindgren",
    )
    order = _line(lines, 5, "Faten ska flyttas till invallad plats.")
    return CaseDef(
        "drum-move-deadline", "drum-move-deadline", None, "Oil drums to be moved, no deadline, two sentences on one line",
        "inspection-note", lines, ("R-DATUM-1", "R-FRIST-1"),
        expected=(KeyDef("deadline-missing", FLAW, ("R-FRIST-1",), True, order),),
        prohibited=(),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("deadline-missing", FLAW, "R-FRIST-1", True, order,
                    ("Det anges inte senast när faten ska vara flyttade till invallad plats.",
                     "Uppmaningen att flytta faten saknar tidsfrist.",
                     "Faten ska flyttas till invallad plats, men anteckningen anger ingen tidsfrist för åtgärden."),
                    # the merge widens the quote to the whole line: a contained match under scorer 6
                    report_quote=_line(lines, 5)),),
    )


def _repeat_deviation() -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-07-01",
        "Objekt: Hotell Strandvillan, Strandpromenaden 1, Ystad",
        "Verksamhetsutövare: Strandvillan i Ystad AB",
        "Närvarande: köksmästare Henrik Malm",
        "Kylrummet för mejeriprodukter höll 11 °C vid mätning på mellersta hyllan.",
        "Samma avvikelse noterades vid inspektionerna 2025-07-02 och 2026-01-14.",
        "Verksamhetsutövaren ska justera kylaggregatet så att temperaturen blir högst 8 °C.",
        "Nämnden gör en ny inspektion under hösten.",
        "Inspektör: Ingrid Sjöberg",
    )
    order, history, temperature = _line(lines, 7), _line(lines, 6), _line(lines, 5)
    return CaseDef(
        "repeat-deviation", "repeat-deviation", None, "Same deviation at a third inspection, no escalation",
        "inspection-note", lines, ("R-DATUM-1", "R-TEMP-1", "R-FRIST-1", "R-UPPF-1"),
        expected=(KeyDef("deadline-missing", FLAW, ("R-FRIST-1",), True, order),
                  KeyDef("temperature-recorded", STRENGTH, ("R-TEMP-1",), False, temperature),
                  # A synthesis across the note's history: the key expects only the report to make it.
                  KeyDef("escalation-missing", FLAW, ("R-UPPF-1",), True, history, reviewer_expected=False)),
        prohibited=(),
        voluntary=(("R-DATUM-1", 1),),
        ideal=(Spec("deadline-missing", FLAW, "R-FRIST-1", True, order,
                    ("Justeringen av kylaggregatet saknar tidsfrist.",
                     "Det framgår inte senast när temperaturen i kylrummet ska vara åtgärdad.",
                     "Anteckningen uppmanar till justering av kylaggregatet utan att ange senast när den ska vara gjord.")),
               Spec("temperature-recorded", STRENGTH, "R-TEMP-1", False, temperature,
                    ("Temperaturen anges med värde och mätpunkt.",
                     "Mätningen i kylrummet är dokumenterad med mätpunkt, mellersta hyllan.",
                     "Kylrummets temperatur är angiven med värde och mätpunkt."), by=(2,)),
               Spec("escalation-missing", FLAW, "R-UPPF-1", True, history,
                    ("Avvikelsen har nu konstaterats vid tre inspektioner i följd utan att nämnden meddelat föreläggande "
                     "eller motiverat varför föreläggande inte meddelas.",),
                    by=(), supporting=("R-FRIST-1",), traces=("deadline-missing",))),
    )


def _excerpt() -> CaseDef:
    lines = (
        "Utdrag ur beslut 2026-04-28",
        "Diarienummer: MHN 2026-0533",
        "Verksamhetsutövare: Gröna Gården förskola ekonomisk förening, Lövstigen 2, Umeå",
        "Ärende: Föreläggande om bullerdämpning av fläktaggregat",
        "Nämnden förelägger föreningen att montera ljuddämpare på fläktaggregatet på förskolans tak.",
        "Åtgärden ska vara utförd senast 2026-08-31.",
        "Handläggare: Petra Viklund",
        "Detta utdrag omfattar beslutets första sida. Bilaga 1, Hur man överklagar, ingår inte i utdraget.",
    )
    deadline = _line(lines, 6)
    return CaseDef(
        "decision-excerpt", "decision-excerpt", None, "Excerpt of an order, appeal appendix not in the copy", "decision",
        lines, ("R-FRIST-1", "R-HANDL-1", "R-OVERKL-1"),
        expected=(KeyDef("deadline-stated", STRENGTH, ("R-FRIST-1",), False, deadline),),
        prohibited=(KeyDef("appeal-claimed-missing", FLAW, ("R-OVERKL-1",), True, None),),
        voluntary=(("R-HANDL-1", 7),),
        ideal=(Spec("deadline-stated", STRENGTH, "R-FRIST-1", False, deadline,
                    ("Föreläggandet anger att åtgärden ska vara utförd senast 2026-08-31.",
                     "Tidsfristen för ljuddämparen är angiven.",
                     "Föreläggandet anger en tidsfrist för åtgärden."), by=(1, 2)),
               Spec("handler-stated", STRENGTH, "R-HANDL-1", False, _line(lines, 7),
                    ("Ansvarig handläggare anges.",), by=(2,), in_report=False)),
    )


def _lake(variant: str) -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-06-30",
        "Objekt: Badplats Norrviken, Sollentuna",
        "Ärende: Provtagning av badvatten under badsäsongen",
        "Närvarande: badvärd Tove Ahl",
        "Ett vattenprov togs vid badbryggans yttersta del.",
        "Provet analyserades för E. coli och intestinala enterokocker.",
        "Vattnet bedömdes som tjänligt.",
        "Inspektör: Simon Borg",
    )
    sample = _line(lines, 5)
    point = Spec("sample-point-stated", STRENGTH, "R-PROV-2", False, sample,
                 ("Provpunkten anges: badbryggans yttersta del.",
                  "Anteckningen anger var vattenprovet togs.",
                  "Provpunkten är angiven."), by=(1,))
    if variant == "depth-rule":
        return CaseDef(
            "lake-sample-depth-rule", "lake-sample", "depth-rule", "Bathing-water sample, depth rule given",
            "inspection-note", lines, ("R-PROV-2", "R-PROV-3"),
            expected=(KeyDef("depth-missing", FLAW, ("R-PROV-3",), True, sample),),
            prohibited=(),
            voluntary=(("R-PROV-2", 5),),
            ideal=(Spec("depth-missing", FLAW, "R-PROV-3", True, sample,
                        ("Provtagningsdjupet anges inte för provet i sjön.",
                         "Anteckningen saknar uppgift om på vilket djup badvattenprovet togs.",
                         "Provet togs i sjön, men provtagningsdjupet anges inte.")),
                   dataclasses.replace(point, in_report=False)),
        )
    return CaseDef(
        "lake-sample-no-depth-rule", "lake-sample", "no-depth-rule", "Bathing-water sample, depth rule not given",
        "inspection-note", lines, ("R-PROV-2",),
        expected=(KeyDef("sample-point-stated", STRENGTH, ("R-PROV-2",), False, sample),),
        prohibited=(),
        voluntary=(),
        ideal=(point,),
    )


def _temperature_point() -> CaseDef:
    lines = (
        "Inspektionsanteckning 2026-06-18",
        "Objekt: Skolkök, Parkskolan, Skolgatan 4, Karlstad",
        "Verksamhetsutövare: Karlstads kommun, barn- och utbildningsförvaltningen",
        "Närvarande: kock Linnea Åberg",
        "Temperaturen i kylrum 1 var 6 °C. Temperaturen i kylrum 2 var 4 °C vid mätning nära dörren.",
        "Lunchen höll 68 °C vid mätning i värmedisken.",
        "Personalen visade rutinen för nedkylning av mat som ska sparas.",
        "Inga åtgärder krävs.",
        "Inspektör: Oskar Persson",
    )
    first = _line(lines, 5, "Temperaturen i kylrum 1 var 6 °C.")
    return CaseDef(
        "temperature-point-missing", "temperature-point-missing", None, "Cold-room temperature without a measuring point",
        "inspection-note", lines, ("R-DATUM-1", "R-TEMP-1"),
        expected=(KeyDef("point-missing", FLAW, ("R-TEMP-1",), True, first),),
        prohibited=(KeyDef("praise-cold-rooms", STRENGTH, ("R-TEMP-1",), False, first),),
        voluntary=(("R-TEMP-1", 6), ("R-DATUM-1", 1)),
        ideal=(Spec("point-missing", FLAW, "R-TEMP-1", True, first,
                    ("Mätpunkten anges inte för temperaturen i kylrum 1.",
                     "Temperaturen i kylrum 1 saknar mätpunkt, till skillnad från kylrum 2.",
                     "För kylrum 1 anges temperaturen men inte var den mättes."),
                    slips=((1, "Temperaturen i kylrum 1 var 6 grader."),), report_quote=_line(lines, 5)),
               Spec("hot-holding", STRENGTH, "R-TEMP-1", False, _line(lines, 6),
                    ("Varmhållningens temperatur anges med mätpunkt.",), by=(2,), in_report=False)),
    )


def _hearing() -> CaseDef:
    lines = (
        "Beslut 2026-06-20",
        "Diarienummer: MHN 2026-0990",
        "Verksamhetsutövare: Nordsjö Fisk AB, Fiskehamnen 2, Strömstad",
        "Ärende: Föreläggande om rengöring av fettavskiljare",
        "Nämnden förelägger Nordsjö Fisk AB att tömma och rengöra fettavskiljaren i produktionslokalen.",
        "Åtgärden ska vara utförd senast 2026-08-15.",
        "Bolaget har haft tillfälle att yttra sig över förslaget till beslut.",
        "Beslutet kan överklagas skriftligt till länsstyrelsen inom tre veckor från den dag bolaget fick del av beslutet.",
        "Handläggare: Emma Söderberg",
    )
    hearing, deadline = _line(lines, 7), _line(lines, 6)
    return CaseDef(
        "hearing-undated", "hearing-undated", None, "Operator heard, date of the hearing not given", "decision", lines,
        ("R-KOMM-1", "R-FRIST-1", "R-HANDL-1", "R-OVERKL-1"),
        expected=(KeyDef("hearing-date-missing", FLAW, ("R-KOMM-1",), True, hearing),
                  KeyDef("deadline-stated", STRENGTH, ("R-FRIST-1",), False, deadline)),
        prohibited=(KeyDef("praise-hearing", STRENGTH, ("R-KOMM-1",), False, hearing),),
        voluntary=(("R-OVERKL-1", 8), ("R-HANDL-1", 9)),
        ideal=(Spec("hearing-date-missing", FLAW, "R-KOMM-1", True, hearing,
                    ("Beslutet anger att bolaget fått yttra sig men inte när det skedde.",
                     "Datum för kommuniceringen saknas.",
                     "Beslutet anger inte när bolaget fick tillfälle att yttra sig över förslaget till beslut."),
                    location=(7, 7), located=(2,)),
               Spec("deadline-stated", STRENGTH, "R-FRIST-1", False, deadline,
                    ("Föreläggandet anger en tidsfrist, 2026-08-15.",
                     "Tidsfristen för tömning och rengöring är angiven.",
                     "Föreläggandet anger senast när åtgärden ska vara utförd."), by=(1,))),
    )


CASES: tuple[CaseDef, ...] = (
    _cure_unchecked(),
    _tap_sample(),
    _seal("missing"),
    _seal("recorded"),
    _fee_tonnage(),
    _fee_documented(),
    _fee_hours(),
    _refusal("unreasoned"),
    _refusal("reasoned"),
    _licence("flawed-feminine"),
    _licence("flawed-masculine"),
    _papers(),
    _valve("checked"),
    _valve("unchecked"),
    _no_deviations(),
    _appeal_missing(),
    _freezer("johansson"),
    _freezer("yusuf"),
    _drum(),
    _repeat_deviation(),
    _excerpt(),
    _lake("depth-rule"),
    _lake("no-depth-rule"),
    _temperature_point(),
    _hearing(),
)

PAIRS = (
    {"id": "licence-gender", "kind": "invariance",
     "versions": ["licence-gender-flawed-feminine", "licence-gender-flawed-masculine"],
     "detail": "Whether the licence holder is referred to as she (hon) or he (han).", "rules_differ": False},
    {"id": "deadline-unstated", "kind": "invariance",
     "versions": ["deadline-unstated-johansson", "deadline-unstated-yusuf"],
     "detail": "Whether the operator has a Swedish-sounding or a foreign-sounding name.", "rules_differ": False},
    {"id": "valve-repair", "kind": "contrast",
     "versions": ["valve-repair-checked", "valve-repair-unchecked"],
     "detail": "Whether the note names who checked the replaced valve, and when.", "rules_differ": False},
    {"id": "seal-detail", "kind": "contrast",
     "versions": ["seal-detail-recorded", "seal-detail-missing"],
     "detail": "Whether the note gives the seals' numbers and condition.", "rules_differ": False},
    {"id": "lake-sample", "kind": "invariance",
     "versions": ["lake-sample-depth-rule", "lake-sample-no-depth-rule"],
     "detail": "The same bathing-water note, once given the sampling-depth rule and once without it.",
     "rules_differ": True},
)


# --- run setups --------------------------------------------------------------


def _prompt(name: str) -> str:
    """Prompts are identified by the hash of their text; the text itself is not part of this publication."""
    return "sha256:" + hashlib.sha256(name.encode("utf-8")).hexdigest()


SETUPS = [
    ("regression-v1-engine-change", {
        "engine": "granska",
        "model": "example-model-2026-06",
        "prompts": {"reviewer": _prompt("granska reviewer prompt 2026-06-30")},
        "parameters": {"temperature": 0, "max_output_tokens": 4000, "reviewers": 1},
        "merge": False,
    }),
    ("regression-v2-nightly", {
        "engine": "granska",
        "model": "example-model-2026-08",
        "prompts": {"reviewer": _prompt("granska reviewer prompt 2026-08-21"),
                    "reducer": _prompt("granska reducer prompt 2026-08-21")},
        "parameters": {"temperature": 0, "max_output_tokens": 4000, "reviewers": 2},
        "merge": True,
    }),
    ("regression-v2-release", {
        "engine": "granska",
        "model": "example-model-2026-09",
        "prompts": {"reviewer": _prompt("granska reviewer prompt 2026-09-08"),
                    "reducer": _prompt("granska reducer prompt 2026-09-08")},
        "parameters": {"temperature": 0, "max_output_tokens": 4000, "reviewers": 2},
        "merge": True,
    }),
    ("regression-v2-engine-change", {
        "engine": "granska",
        "model": "example-model-2026-09",
        "prompts": {"reviewer": _prompt("granska reviewer prompt 2026-09-24"),
                    "reducer": _prompt("granska reducer prompt 2026-09-24")},
        "parameters": {"temperature": 0, "max_output_tokens": 6000, "reviewers": 2},
        "merge": True,
    }),
]


def fingerprint(configuration: dict) -> str:
    """The run setup's identity: SHA-256 of its canonical JSON, as docs/records.md defines it."""
    text = json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# --- answers -----------------------------------------------------------------


def _finding(fid: str, spec: Spec, *, quote: str | None, location, wording: str) -> dict:
    return {
        "id": fid,
        "kind": spec.kind,
        "rule": spec.rule,
        "supporting_rules": list(spec.supporting),
        "missing": spec.missing,
        "quote": quote,
        "location": None if location is None else {"lines": list(location)},
        "wording": wording,
    }


def build_answer(specs: list[Spec], *, reviewers: int, merge: bool, corrections_recorded: bool = True) -> dict:
    """Turns the findings a scenario wants into the engine's answer: reviewers, quote corrections, merged report."""
    reviewer_objs = []
    corrections = []
    ids_by_label: dict[str, list[str]] = {}
    for r in range(1, reviewers + 1):
        findings = []
        for spec in specs:
            reports = (r in spec.by) if reviewers > 1 else bool(spec.by)
            if not reports:
                continue
            fid = f"r{r}-f{len(findings) + 1}"
            # a lone reviewer does what the first of the reviewers named in the spec would do
            role = r if reviewers > 1 else spec.by[0]
            quote = None if role in spec.located else dict(spec.quotes).get(role, spec.quote)
            location = spec.location if role in spec.located else None
            wording = spec.wordings[min(role - 1, len(spec.wordings) - 1)]
            findings.append(_finding(fid, spec, quote=quote, location=location, wording=wording))
            ids_by_label.setdefault(spec.label, []).append(fid)
            raw = dict(spec.slips).get(role)
            if raw is not None and quote is not None and corrections_recorded:
                corrections.append({"finding": fid, "before": raw, "after": quote})
        reviewer_objs.append({"id": f"reviewer-{r}", "findings": findings})
    report = None
    if merge:
        report_findings = []
        for spec in specs:
            if not spec.in_report:
                continue
            fid = f"rep-{len(report_findings) + 1}"
            quote = spec.quote if spec.report_quote == SAME else spec.report_quote
            finding = _finding(fid, spec, quote=quote, location=None, wording=spec.wordings[-1])
            trace = [] if spec.kind == STRENGTH else list(ids_by_label.get(spec.label, []))
            for label in spec.traces:
                trace.extend(ids_by_label.get(label, []))
            finding["trace"] = trace
            report_findings.append(finding)
        report = {"findings": report_findings}
    return {"status": "completed", "reviewers": reviewer_objs, "quote_corrections": corrections, "report": report}


# --- scenario helpers ----------------------------------------------------------


def alter(specs: list[Spec], label: str, **changes) -> list[Spec]:
    """The same findings with one of them changed; refuses an unknown label so a typo cannot pass silently."""
    if not any(s.label == label for s in specs):
        raise KeyError(label)
    return [dataclasses.replace(s, **changes) if s.label == label else s for s in specs]


def drop(specs: list[Spec], label: str) -> list[Spec]:
    if not any(s.label == label for s in specs):
        raise KeyError(label)
    return [s for s in specs if s.label != label]


def line_of(case: CaseDef, n: int) -> str:
    return case.lines[n - 1]


Scenario = Callable[[CaseDef, int], "tuple[list[Spec], list[Spec] | None]"]


def scenario_ideal(case: CaseDef, rep: int):
    """The engine as the key hopes: used where a run has nothing to show but its numbers."""
    return list(case.ideal), None


def scenario_v1_baseline(case: CaseDef, rep: int):
    """First engine, one reviewer, scorer v5: borrows a quote for what is absent and once quotes a whole line."""
    specs = list(case.ideal)
    if case.id == "papers-location-unstated":
        # The v1 reviewer borrowed the closing sentence as evidence for the absent storage place,
        # in every repetition; each first miss was rerun and the rerun borrowed it again.
        specs = alter(specs, "papers-missing", quote=line_of(case, 9))
        return specs, specs
    if case.id == "drum-move-deadline" and rep == 1:
        # Quote wider than the passage but on its line: a miss under v5 (a contained match under v6).
        specs = alter(specs, "deadline-missing", quote=line_of(case, 5))
        return specs, specs
    return specs, None


def scenario_v2_nightly(case: CaseDef, rep: int):
    """Perfect except one expected finding no reviewer reports in any repetition; no rerun was recorded."""
    specs = list(case.ideal)
    if case.id == "appeal-info-missing":
        specs = drop(specs, "appeal-missing")
    return specs, None


def scenario_v2_release(case: CaseDef, rep: int):
    """The method page's seven examples fail as the page describes; the nightly's pending miss is fixed."""
    specs = list(case.ideal)
    if case.id == "cure-unchecked" and rep == 2:
        # Names the rule but quotes the repair sentence, not the claim: found the rule, not the passage.
        specs = alter(specs, "checker-missing", quote=line_of(case, 7),
                      wordings=("Anteckningen beskriver att packningen bytts men anger inte vem som kontrollerade att läckan upphört.",
                                "Det saknas uppgift om vem som verifierade reparationen av packningen.",
                                "Det framgår inte vem som kontrollerade att reparationen av packningen stoppade läckan."))
        return specs, specs  # the rerun quoted the same sentence: confirmed
    if case.id == "tap-sample":
        specs = specs + [Spec(
            label="depth-claimed", kind=FLAW, rule="R-PROV-3", missing=True, quote=line_of(case, 5),
            wordings=("Provtagningsdjupet anges inte för vattenprovet.",
                      "Anteckningen saknar uppgift om på vilket djup provet togs.",
                      "Provtagningsdjupet för vattenprovet saknas."))]
        return specs, None
    if case.id == "seal-detail-missing":
        specs = specs + [Spec(
            label="praise-seals", kind=STRENGTH, rule="R-PLOMB-1", missing=False, quote=line_of(case, 6), by=(2,),
            wordings=("Undersökningen av plomberna är dokumenterad.",
                      "Anteckningen dokumenterar att plomberna på påfyllningsrören har undersökts, i enlighet med regeln.",
                      "Plomberna undersöktes och undersökningen är dokumenterad i anteckningen."))]
        return specs, None
    if case.id == "figure-without-document":
        # Reviewer 2 put its own paraphrase inside the quote; quote correction could not map it back.
        specs = alter(specs, "source-missing", quotes=((2, "Avgiften beräknas på mottagen mängd, 412 ton."),))
        return specs, None
    if case.id == "request-refused" and rep == 1:
        specs = alter(specs, "reasons-missing", in_report=False)
        return specs, specs  # the rerun's report lost it again: confirmed
    if case.id == "licence-gender-flawed-masculine" and rep == 2:
        specs = drop(specs, "handler-missing")
        return specs, specs  # confirmed by the rerun
    if case.id == "papers-location-unstated" and rep == 3:
        specs = alter(specs, "papers-missing", quote=line_of(case, 9), by=(1,))
        return specs, list(case.ideal)  # the rerun reported it without a quote: dismissed
    return specs, None


def scenario_v2_engine_change(case: CaseDef, rep: int):
    """Every observation passes; a voluntary strength in one repetition only shows that stability leaves it out."""
    specs = list(case.ideal)
    if case.id == "cure-unchecked" and rep == 1:
        specs = specs + [Spec(
            label="date-stated", kind=STRENGTH, rule="R-DATUM-1", missing=False, quote=None, location=(1, 1),
            located=(2,), by=(2,), in_report=False,
            wordings=("Inspektionens datum framgår av rubriken.",))]
    return specs, None


def scenario_scorer_7(case: CaseDef, rep: int):
    """Every observation passes but one pair: each licence version gets one unexpected flaw, a different one in each.

    Scorer 6 counted them (one each: alike); scorer 7 compares them by kind, primary rule and missing flag (not alike).
    """
    specs = list(case.ideal)
    if case.id == "licence-gender-flawed-feminine":
        specs = specs + [Spec(
            label="appeal-wrong", kind=FLAW, rule="R-OVERKL-1", missing=False, quote=line_of(case, 9), by=(1,),
            wordings=("Överklagandetiden i beslutet är felaktigt angiven.",
                      "Beslutet anger fel tid för att överklaga.")),
        ]
    if case.id == "licence-gender-flawed-masculine":
        specs = specs + [Spec(
            label="handler-wrong", kind=FLAW, rule="R-HANDL-1", missing=False, quote=line_of(case, 5), by=(1,),
            wordings=("Beslutet pekar ut fel ansvarig för verksamheten.",
                      "Beslutet anger fel ansvarig för verksamheten.")),
        ]
    return specs, None


@dataclass(frozen=True)
class RunDef:
    id: str
    date: str
    setup: str
    scorer: int
    report: tuple[int, int, int]
    engine_version: str
    scenario: Scenario
    published: bool = True
    status: str = "completed"
    answers_file: str = "answers.json"
    case_filter: Callable[[int, int], bool] = lambda index, rep: True
    internal: dict = field(default_factory=dict)
    corrections_recorded: bool = True  # run record 4 kept only the corrected quotes, not the corrections


RUNS = [
    RunDef("2026-08-18-v1-baseline", "2026-08-18", "regression-v1-engine-change", 5, (5, 2, 4),
           "granska 2026.08.1", scenario_v1_baseline, corrections_recorded=False),
    RunDef("2026-09-02-nightly", "2026-09-02", "regression-v2-nightly", 6, (5, 3, 5),
           "granska 2026.09.0-nightly.20260902", scenario_v2_nightly),
    RunDef("2026-09-16-release", "2026-09-16", "regression-v2-release", 6, (5, 3, 5),
           "granska 2026.09.1", scenario_v2_release),
    RunDef("2026-10-01-engine-change", "2026-10-01", "regression-v2-engine-change", 6, (5, 3, 5),
           "granska 2026.10.0", scenario_v2_engine_change,
           internal={"cost_sek": 184.6, "storage_location": "run-archive/2026/10/01/engine-change"}),
    # Failed before the pipeline finished: only the first case versions of repetition 1 were answered.
    RunDef("2026-10-08-nightly", "2026-10-08", "regression-v2-nightly", 6, (5, 3, 5),
           "granska 2026.10.1-nightly.20261008", scenario_ideal, status="crashed",
           case_filter=lambda index, rep: rep == 1 and index < 9),
    RunDef("2026-10-10-trial", "2026-10-10", "regression-v2-engine-change", 6, (5, 3, 5),
           "granska 2026.10.1", scenario_ideal, published=False, answers_file="answers-unpublished.json",
           internal={"cost_sek": 61.2, "storage_location": "run-archive/2026/10/10/trial"}),
    # The first run scored with scorer 7, whose invariance pairs compare which unexpected findings each version gave.
    RunDef("2026-12-01-scorer-7", "2026-12-01", "regression-v2-engine-change", 7, (5, 3, 5),
           "granska 2026.10.1", scenario_scorer_7),
]

REPETITIONS = 3


# --- writing -----------------------------------------------------------------


def _dump(path: Path, data: dict) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=2) + "\n", encoding="utf-8")


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text)


def _passage(case: CaseDef, quote: str | None) -> dict | None:
    """Resolves a quote to the lines it occupies, so every key passage carries both."""
    if quote is None:
        return None
    hits = [i for i, line in enumerate(case.lines, 1) if quote in line]
    if len(hits) != 1:
        raise ValueError(f"{case.id}: quote must stand on exactly one line: {quote!r}")
    return {"quote": quote, "lines": [hits[0], hits[0]]}


def cases_record() -> dict:
    case_versions = []
    for case in CASES:
        key = {"expected": [], "prohibited": [], "voluntary": []}
        for group in ("expected", "prohibited"):
            for k in getattr(case, group):
                entry = {"id": k.id, "kind": k.kind, "rules": list(k.rules), "missing": k.missing,
                         "passage": _passage(case, k.quote)}
                if group == "expected":
                    entry["reviewer_expected"] = k.reviewer_expected
                key[group].append(entry)
        for rule, line in case.voluntary:
            key["voluntary"].append({"rule": rule} if line is None else {"rule": rule, "passage": {"lines": [line, line]}})
        case_versions.append({
            "id": case.id,
            "case": case.case,
            "variant": case.variant,
            "title": case.title,
            "document_type": case.document_type,
            "document": "\n".join(case.lines),
            "rules": [{"id": r, "title": RULES[r][0], "text": RULES[r][1]} for r in case.rules],
            "key": key,
        })
    return {
        "format": "sitegen.cases/1",
        "suites": [{"id": SUITE[0], "version": SUITE[1], "title": SUITE[2], "case_versions": [c.id for c in CASES]}],
        "case_versions": case_versions,
        "pairs": [dict(p) for p in PAIRS],
    }


def answers_records() -> dict[str, dict]:
    merge_of = {sid: conf["merge"] for sid, conf in SETUPS}
    reviewers_of = {sid: conf["parameters"]["reviewers"] for sid, conf in SETUPS}
    files: dict[str, dict] = {"answers.json": {"format": "sitegen.answers/1", "answers": []},
                              "answers-unpublished.json": {"format": "sitegen.answers/1", "answers": []}}
    for run in RUNS:
        merge, reviewers = merge_of[run.setup], reviewers_of[run.setup]
        for rep in range(1, REPETITIONS + 1):
            for index, case in enumerate(CASES):
                if not run.case_filter(index, rep):
                    continue
                specs, rerun_specs = run.scenario(case, rep)
                answer = build_answer(specs, reviewers=reviewers, merge=merge,
                                      corrections_recorded=run.corrections_recorded)
                entry = {"run": run.id, "case_version": case.id, "repetition": rep}
                entry.update(answer)
                entry["rerun"] = None if rerun_specs is None else build_answer(rerun_specs, reviewers=reviewers, merge=merge,
                                                                          corrections_recorded=run.corrections_recorded)
                files[run.answers_file]["answers"].append(entry)
    return files


def runs_record() -> dict:
    runs = []
    for run in RUNS:
        entry = {
            "id": run.id,
            "date": run.date,
            "setup": run.setup,
            "suite": SUITE[0],
            "suite_version": SUITE[1],
            "scorer": {"version": run.scorer, "matching_method": f"structured-identity/whitespace-collapsed/v{run.scorer}"},
            "report": {"version": run.report[0], "runner": run.report[1], "run_record": run.report[2]},
            "assessment": {"version": 1, "policy": "short-case-v1"},
            "engine_version": run.engine_version,
            "repetitions": REPETITIONS,
            "published": run.published,
            "status": run.status,
        }
        if run.internal:
            entry["internal"] = dict(run.internal)
        runs.append(entry)
    return {"format": "sitegen.runs/1", "runs": runs}


def setups_record() -> dict:
    return {"format": "sitegen.setups/1",
            "setups": [{"id": sid, "configuration": conf, "fingerprint": fingerprint(conf)} for sid, conf in SETUPS]}


CONFIG = {
    "format": "sitegen.config/1",
    "title": {"sv": "Motorns kvalitet", "en": "Engine quality"},
    "base_url": "https://quality.example.org/",
    "languages": ["sv", "en"],
    "default_language": "sv",
    "document_language": "sv",
    "case_text_language": "en",
    "source_repository": "https://github.com/example/granska-quality",
    "sitegen_source": "https://github.com/example/sitegen",
    "accessibility_contact": "tillganglighet@quality.example.org",
    "answers": ["answers.json", "answers-unpublished.json"],
    "publish": [
        {"record": "results.json", "name": "granska-quality-results.json"},
        {"record": "cases.json", "name": "granska-quality-cases.json"},
        {"record": "answers.json", "name": "granska-quality-answers.json"},
    ],
    "internal_fields": ["internal_rule_name", "cost", "cost_sek", "storage_location", "storage_uri"],
}


def write_records(folder: Path) -> None:
    """Writes every record this script owns; changelog entries are hand-written files and are left alone."""
    folder.mkdir(parents=True, exist_ok=True)
    _dump(folder / "sitegen.json", CONFIG)
    _dump(folder / "setups.json", setups_record())
    _dump(folder / "runs.json", runs_record())
    _dump(folder / "cases.json", cases_record())
    for name, data in answers_records().items():
        _dump(folder / name, data)


# --- self-check --------------------------------------------------------------

ID = re.compile(r"^[a-z0-9][a-z0-9._-]{0,79}$")


def check_records(folder: Path) -> list[str]:
    """Checks what the loader cannot know was intended: quotes verbatim except the deliberate paraphrase, full coverage."""
    problems = []
    cases = json.loads((folder / "cases.json").read_text(encoding="utf-8"))
    docs = {c["id"]: c for c in cases["case_versions"]}
    for c in cases["case_versions"]:
        n = len(c["document"].split("\n"))
        if not 5 <= n <= 15:
            problems.append(f"{c['id']}: {n} lines")
        ids = [k["id"] for g in ("expected", "prohibited") for k in c["key"][g]]
        if len(ids) != len(set(ids)) or not all(ID.match(i) and ".." not in i for i in ids + [c["id"]]):
            problems.append(f"{c['id']}: key ids not unique or not URL-safe")
    runs = json.loads((folder / "runs.json").read_text(encoding="utf-8"))["runs"]
    deliberate = {("2026-09-16-release", "figure-without-document")}
    seen = set()
    for name in CONFIG["answers"]:
        for a in json.loads((folder / name).read_text(encoding="utf-8"))["answers"]:
            seen.add((a["run"], a["case_version"], a["repetition"]))
            doc = _collapse(docs[a["case_version"]]["document"])
            lines = docs[a["case_version"]]["document"].split("\n")
            for label, ans in (("answer", a), ("rerun", a["rerun"])):
                if ans is None:
                    continue
                findings = [f for r in ans["reviewers"] for f in r["findings"]] + (ans["report"] or {"findings": []})["findings"]
                fids = [f["id"] for f in findings]
                if len(fids) != len(set(fids)):
                    problems.append(f"{a['run']}/{a['case_version']}/{a['repetition']} {label}: duplicate finding ids")
                for f in findings:
                    if f["quote"] is not None and _collapse(f["quote"]) not in doc \
                            and (a["run"], a["case_version"]) not in deliberate:
                        problems.append(f"{a['run']}/{a['case_version']}/{a['repetition']} {label}: quote not in document: {f['quote']!r}")
                    if f["location"] is not None and not 1 <= f["location"]["lines"][0] <= f["location"]["lines"][1] <= len(lines):
                        problems.append(f"{a['run']}/{a['case_version']}: location outside the document")
    for run in runs:
        if run["status"] == "completed":
            for rep in range(1, run["repetitions"] + 1):
                for c in cases["suites"][0]["case_versions"]:
                    if (run["id"], c, rep) not in seen:
                        problems.append(f"missing answer {run['id']}/{c}/{rep}")
    return problems


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--records", default=str(Path(__file__).resolve().parent.parent / "records"))
    parser.add_argument("--check", action="store_true", help="only check the records already written")
    args = parser.parse_args(argv)
    folder = Path(args.records)
    if not args.check:
        write_records(folder)
    problems = check_records(folder)
    for p in problems:
        print(f"author_records: {p}", file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
