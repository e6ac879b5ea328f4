"""A simulated engine: answers that mostly find what the key expects, with misses, noise, misquotes and reruns."""

from __future__ import annotations

import random
from dataclasses import dataclass

from synthetic_cases import MISQUOTE_WORD, CaseSpec, KeySpec, collapse

REVIEWERS = ("reviewer-1", "reviewer-2")
WORDINGS = {
    ("flaw", True): "Det framgår inte av texten vad regeln {rule} kräver.",
    ("flaw", False): "Uppgiften strider mot vad regeln {rule} kräver.",
    ("strength", True): "Texten visar tydligt att regeln {rule} är uppfylld.",
    ("strength", False): "Texten uppfyller regeln {rule} på ett tydligt sätt.",
}


@dataclass(frozen=True)
class Profile:
    """How well the engine of one run does, so runs differ from each other."""

    recall: float
    merge: bool
    findings: int


class AnswerDraft:
    """Builds one engine answer; lives only while that answer is drawn."""

    def __init__(self, case: CaseSpec, rng: random.Random, *, profile: Profile):
        self.case = case
        self.rng = rng
        self.profile = profile
        self.reviewers: list[list[dict]] = [[] for _ in REVIEWERS]
        self.corrections: list[dict] = []
        self.report: list[dict] = []
        self.missed = False

    def finding(self, reviewer: int, kind: str, *, rule: str, missing: bool, line: int | None,
                text: str | None, by_location: bool = False) -> dict:
        rng = self.rng
        findings = self.reviewers[reviewer]
        fid = f"r{reviewer + 1}-f{len(findings) + 1}"
        quote, location = None, None
        if line is not None:
            if by_location or rng.random() < 0.1:
                location = {"lines": [line, line]}
            else:
                roll = rng.random()
                quote = " ".join(self.case.lines[line - 1]) if roll < 0.2 else (
                    collapse(text) if roll < 0.3 else text)
                if rng.random() < 0.03:
                    quote = quote.replace(" ", f" {MISQUOTE_WORD} ", 1)
                elif rng.random() < 0.05:
                    self.corrections.append({"finding": fid, "before": quote.replace(" ", f" {MISQUOTE_WORD} ", 1),
                                             "after": quote})
        supporting = [r for r in self.case.rules if r != rule and rng.random() < 0.15]
        out = {"id": fid, "kind": kind, "rule": rule, "supporting_rules": supporting, "missing": missing,
               "quote": quote, "location": location,
               "wording": WORDINGS[(kind, missing)].format(rule=rule)}
        findings.append(out)
        return out

    def report_finding(self, source: dict | None, *, traced: list[dict], **changes) -> None:
        """A finding of the delivered report, merged from `traced` reviewer findings (or from none)."""
        fields = {k: v for k, v in (source or {}).items() if k != "id"}
        fields.update(changes)
        out = {"id": f"rep-{len(self.report) + 1}", **fields}
        if out["quote"] is not None and self.rng.random() < 0.2:
            out["quote"] = collapse(out["quote"])
        out["trace"] = [] if out["kind"] == "strength" and self.rng.random() < 0.5 else [f["id"] for f in traced]
        self.report.append(out)

    def draw_expected(self, expected: KeySpec) -> None:
        rng = self.rng
        found: list[dict] = []
        chance = self.profile.recall if expected.reviewer_expected else 0.2
        for reviewer in range(len(REVIEWERS)):
            if rng.random() < chance:
                found.append(self.finding(reviewer, expected.kind, rule=rng.choice(expected.rules),
                                          missing=expected.missing, line=expected.line, text=expected.text,
                                          by_location=expected.form == "lines"))
            elif rng.random() < 0.3:
                self.near_miss(reviewer, expected)
        if expected.reviewer_expected and not found:
            self.missed = True
        if not self.profile.merge:
            return
        roll = rng.random()
        if found and roll < 0.93:
            self.report_finding(found[0], traced=found)
        elif found and roll < 0.96:
            self.report_finding(found[0], traced=found, kind="strength" if expected.kind == "flaw" else "flaw")
        elif found and roll < 0.97:
            others = [f for fs in self.reviewers for f in fs if f not in found]
            self.report_finding(found[0], traced=others[:1])
        elif not found and roll < 0.05:
            self.report_finding(None, traced=[], kind=expected.kind, rule=expected.rules[0], supporting_rules=[],
                                missing=expected.missing, quote=expected.text, location=None,
                                wording=WORDINGS[(expected.kind, expected.missing)].format(rule=expected.rules[0]))
        else:
            self.missed = True

    def near_miss(self, reviewer: int, expected: KeySpec) -> None:
        """A finding that names the rule but breaks one of the four matching conditions."""
        rng, case = self.rng, self.case
        kind, rule, missing = expected.kind, expected.rules[0], expected.missing
        line, text = expected.line, expected.text
        other_rules = [r for r in case.rules if r not in expected.rules]
        way = rng.choice(("rule", "kind", "evidence", "missing"))
        if (way == "rule" and not other_rules) or (way == "missing" and kind == "strength"):
            way = "evidence"
        if way == "rule":
            rule = rng.choice(other_rules)
        elif way == "kind":
            kind = "strength" if kind == "flaw" else "flaw"
            missing = False
        elif way == "missing":
            missing = not missing
        else:
            line = rng.choice([n for n in range(2, len(case.lines) + 1) if n != expected.line])
            text = rng.choice(case.lines[line - 1])
        self.finding(reviewer, kind, rule=rule, missing=missing, line=line, text=text)

    def draw_extra(self, target: int) -> None:
        """Prohibited, voluntary and unexpected findings, up to about the target count."""
        rng, case = self.rng, self.case
        for lure in case.prohibited:
            if rng.random() < 0.1:
                f = self.finding(rng.randrange(len(REVIEWERS)), lure.kind, rule=lure.rules[0], missing=lure.missing,
                                 line=lure.line, text=lure.text)
                if self.profile.merge and rng.random() < 0.7:
                    self.report_finding(f, traced=[f])
        for allowed in case.voluntary:
            if rng.random() < 0.3:
                line = allowed.line or rng.randint(1, len(case.lines))
                f = self.finding(rng.randrange(len(REVIEWERS)), "strength", rule=allowed.rule, missing=False,
                                 line=line, text=rng.choice(case.lines[line - 1]))
                if self.profile.merge and rng.random() < 0.5:
                    self.report_finding(f, traced=[])
        flaw_chance = 0.03 if not any(e.kind == "flaw" for e in case.expected) else 0.4
        while self.count() < target:
            line = rng.randint(2, len(case.lines))
            kind = "flaw" if rng.random() < flaw_chance else "strength"
            f = self.finding(rng.randrange(len(REVIEWERS)), kind, rule=rng.choice(case.rules),
                             missing=kind == "flaw" and rng.random() < 0.3, line=line,
                             text=rng.choice(case.lines[line - 1]))
            if self.profile.merge and rng.random() < 0.4:
                self.report_finding(f, traced=[f])

    def count(self) -> int:
        return sum(len(f) for f in self.reviewers) + len(self.report)

    def json(self) -> dict:
        return {
            "status": "completed",
            "reviewers": [{"id": rid, "findings": fs} for rid, fs in zip(REVIEWERS, self.reviewers)],
            "quote_corrections": self.corrections,
            "report": {"findings": self.report} if self.profile.merge else None,
        }


def draw_engine_answer(case: CaseSpec, rng: random.Random, *, profile: Profile) -> tuple[dict, bool]:
    """One engine answer and whether a finding a reviewer should report went missing."""
    draft = AnswerDraft(case, rng, profile=profile)
    for expected in case.expected:
        draft.draw_expected(expected)
    draft.draw_extra(max(0, rng.randint(profile.findings - 3, profile.findings + 1)))
    return draft.json(), draft.missed


def draw_answer(seed: int, run_id: str, *, case: CaseSpec, repetition: int, profile: Profile) -> dict:
    # Most repetitions repeat the answer of a stable stream, so stability has passes as well as failures.
    deviates = random.Random(f"{seed}/{run_id}/{case.id}/{repetition}").random() < 0.3
    rng = random.Random(f"{seed}/{run_id}/{case.basis}/{repetition if deviates else 0}")
    answer, missed = draw_engine_answer(case, rng, profile=profile)
    rerun = None
    if missed and rng.random() < 0.6:
        rerun, _ = draw_engine_answer(case, rng, profile=profile)
    return {"run": run_id, "case_version": case.id, "repetition": repetition, **answer, "rerun": rerun}


def draw_profile(seed: int, run_id: str, *, findings: int) -> Profile:
    """Each run gets its own recall, so the runs of one publication differ from each other."""
    rng = random.Random(f"{seed}/{run_id}/profile")
    return Profile(recall=0.78 + 0.17 * rng.random(), merge=True, findings=findings)
