"""The cases file: suites, case versions with their documents, and the answer keys checked against their documents."""

from __future__ import annotations

import json

from sitegen.core import model as m
from sitegen.core.errors import did_you_mean as _hint
from sitegen.core.text import DocumentText, collapse
from sitegen.load.jsonread import JsonText
from sitegen.load.reading import Collector, check_unique_ids


def _passage(doc: JsonText, pointer: str, raw: dict | None, text: DocumentText, out: Collector) -> m.Passage | None:
    if raw is None:
        return None
    quote = raw.get("quote")
    lines = tuple(raw["lines"]) if "lines" in raw else None
    if lines is not None:
        first, last = lines
        if first > last or last > text.line_count:
            out.at(doc, f"{pointer}/lines", f"line span {first}-{last} is outside the document (lines 1-{text.line_count})", "record.line-span")
            return None
    if quote is not None:
        spans = text.occurrences(quote)
        if not spans:
            out.at(doc, f"{pointer}/quote", f"quoted passage is not in the document: {json.dumps(quote, ensure_ascii=False)}", "record.passage-not-found")
            return None
        if lines is None:
            if len(spans) > 1:
                out.at(doc, f"{pointer}/quote", f"quoted passage stands {len(spans)} times in the document; add \"lines\" to say which", "record.passage-ambiguous")
                return None
            lines = spans[0]
        elif lines not in spans:  # the quote must occupy exactly the lines given, or a contained match could never exist
            out.at(doc, f"{pointer}/quote", f"quoted passage does not occupy exactly lines {lines[0]}-{lines[1]}", "record.passage-lines")
            return None
    return m.Passage(quote, lines)


def _span(passage: m.Passage | None, text: DocumentText) -> tuple[tuple[int, int], str] | None:
    """The span of the document a passage stands for: its lines and its collapsed text, however the key wrote it."""
    if passage is None:
        return None
    return passage.lines, collapse(passage.quote if passage.quote is not None else text.lines_text(*passage.lines))


def read_cases(doc: JsonText, out: Collector):
    v = doc.value
    check_unique_ids(doc, v["suites"], "/suites", "suite", out, key=lambda s: (s["id"], s["version"]))
    check_unique_ids(doc, v["case_versions"], "/case_versions", "case version", out)
    check_unique_ids(doc, v["pairs"], "/pairs", "pair", out)
    case_versions: dict[str, m.CaseVersion] = {}
    for index, c in enumerate(v["case_versions"]):
        pointer = f"/case_versions/{index}"
        text = DocumentText(c["document"])
        rule_ids = [r["id"] for r in c["rules"]]
        seen_rules: set[str] = set()
        for r_index, rule_id in enumerate(rule_ids):
            if rule_id in seen_rules:
                out.at(doc, f"{pointer}/rules/{r_index}/id", f'duplicate rule id "{rule_id}"', "record.duplicate-id")
            seen_rules.add(rule_id)
        key = c["key"]
        seen_ids: dict[str, str] = {}
        groups = {}
        for group in ("expected", "prohibited"):
            built = []
            for k_index, k in enumerate(key[group]):
                kp = f"{pointer}/key/{group}/{k_index}"
                if k["id"] in seen_ids:
                    out.at(doc, f"{kp}/id", f'duplicate key finding id "{k["id"]}" (first in {seen_ids[k["id"]]})', "record.duplicate-id")
                seen_ids[k["id"]] = f"{pointer}/key/{group}"
                for r_index, rule in enumerate(k["rules"]):
                    if rule not in seen_rules:
                        out.at(doc, f"{kp}/rules/{r_index}", f'rule "{rule}" is not among the case\'s rules{_hint(rule, rule_ids)}', "record.dangling-rule")
                passage = _passage(doc, f"{kp}/passage", k["passage"], text, out)
                built.append(m.KeyFinding(k["id"], k["kind"], tuple(k["rules"]), k["missing"], passage, k.get("reviewer_expected", True)))
            groups[group] = tuple(built)
        voluntary = []
        for k_index, vs in enumerate(key["voluntary"]):
            kp = f"{pointer}/key/voluntary/{k_index}"
            if vs["rule"] not in seen_rules:
                out.at(doc, f"{kp}/rule", f'rule "{vs["rule"]}" is not among the case\'s rules{_hint(vs["rule"], rule_ids)}', "record.dangling-rule")
            voluntary.append(m.VoluntaryStrength(vs["rule"], _passage(doc, f"{kp}/passage", vs.get("passage"), text, out)))
        for p_index, p in enumerate(groups["prohibited"]):
            for e in groups["expected"]:
                # the same passage however it is written (quote, lines or both): the same lines holding the same collapsed text
                if (p.kind, frozenset(p.rules), p.missing, _span(p.passage, text)) == (e.kind, frozenset(e.rules), e.missing, _span(e.passage, text)):
                    out.at(doc, f"{pointer}/key/prohibited/{p_index}",
                           f'prohibited finding "{p.id}" is identical to expected finding "{e.id}"', "record.prohibited-is-expected")
        case_versions.setdefault(c["id"], m.CaseVersion(
            id=c["id"], case=c["case"], variant=c["variant"], title=c["title"], document_type=c["document_type"],
            document=c["document"], rules=tuple(m.Rule(r["id"], r["title"], r["text"]) for r in c["rules"]),
            key=m.Key(groups["expected"], groups["prohibited"], tuple(voluntary)),
        ))
    suites = []
    for index, s in enumerate(v["suites"]):
        for c_index, cv in enumerate(s["case_versions"]):
            if cv not in case_versions:
                out.at(doc, f"/suites/{index}/case_versions/{c_index}", f'unknown case version "{cv}"{_hint(cv, case_versions)}', "record.dangling-reference")
        suites.append(m.Suite(s["id"], s["version"], s["title"], tuple(s["case_versions"])))
    pairs = []
    for index, p in enumerate(v["pairs"]):
        a, b = p["versions"]
        for c_index, cv in enumerate((a, b)):
            if cv not in case_versions:
                out.at(doc, f"/pairs/{index}/versions/{c_index}", f'unknown case version "{cv}"{_hint(cv, case_versions)}', "record.dangling-reference")
        if a == b:
            out.at(doc, f"/pairs/{index}/versions", "a pair needs two different case versions", "record.value")
        elif a in case_versions and b in case_versions and p["kind"] == m.INVARIANCE and not p["rules_differ"]:
            if case_versions[a].rules != case_versions[b].rules:
                out.at(doc, f"/pairs/{index}/rules_differ",
                       "the two versions have different rules; set rules_differ to true if that is on purpose", "record.pair-rules")
        pairs.append(m.Pair(p["id"], p["kind"], (a, b), p["detail"], p["rules_differ"]))
    return tuple(suites), case_versions, tuple(pairs)
