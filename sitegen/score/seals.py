"""Seals: the SHA-256 of every input a run was scored from, so a later edit of a record is refused and named where it is."""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from itertools import repeat
from operator import attrgetter
from typing import Mapping

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic
from sitegen.load.jsonread import JsonText, parse_json
from sitegen.load.spool import run_answers

# A run's sealed fields as runs.json spells them, with the Run attribute each is read into.
RUN_FIELDS = (
    ("date", "date"), ("setup", "setup"), ("suite", "suite"), ("suite_version", "suite_version"),
    ("scorer/version", "scorer_version"), ("scorer/matching_method", "matching_method"),
    ("report/version", "report_version"), ("report/runner", "runner_version"), ("report/run_record", "run_record_version"),
    ("assessment/version", "assessment_version"), ("assessment/policy", "policy"),
    ("engine_version", "engine_version"), ("repetitions", "repetitions"), ("status", "status"),
)
CASE_PARTS = ("document", "rules", "key")


# json.dumps with these arguments makes a new encoder at every call; a seal takes thousands of digests
_CANONICAL = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def digest(value: object) -> str:
    """SHA-256 of a value's canonical JSON: sorted keys, no spaces, UTF-8 (the setups' fingerprints use the same form)."""
    return hashlib.sha256(_CANONICAL.encode(value).encode("utf-8")).hexdigest()


def _passage(p: m.Passage | None) -> dict | None:
    return None if p is None else {"quote": p.quote, "lines": list(p.lines)}


def _key_finding(k: m.KeyFinding) -> dict:
    return {"id": k.id, "kind": k.kind, "rules": list(k.rules), "missing": k.missing, "passage": _passage(k.passage),
            "reviewer_expected": k.reviewer_expected}


def case_parts(cv: m.CaseVersion) -> dict[str, object]:
    """What of a case version is scored: the document exactly as the engine got it, the rules and the answer key."""
    return {
        "document": cv.document,
        "rules": [{"id": r.id, "title": r.title, "text": r.text} for r in cv.rules],
        "key": {"expected": [_key_finding(k) for k in cv.key.expected],
                "prohibited": [_key_finding(k) for k in cv.key.prohibited],
                "voluntary": [{"rule": v.rule, "passage": _passage(v.passage)} for v in cv.key.voluntary]},
    }


# every dict of an answer's form is made with its keys in sorted order, so an encoder that does not sort them writes
# digest()'s bytes (the keys are these fixed names, never a record's text) without sorting each of 100,000 dicts a run
_FINDING_FIELDS = ("id", "kind", "location", "missing", "quote", "rule", "supporting_rules", "trace", "wording")
assert list(_FINDING_FIELDS) == sorted(_FINDING_FIELDS) and set(_FINDING_FIELDS) == set(m.Finding._fields)
_finding_values = attrgetter(*_FINDING_FIELDS)
_ANSWERS = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)  # an answer form holds no cycle


def _findings(findings: tuple[m.Finding, ...]) -> list[dict]:
    """Each finding as a dict of its fields (tuples, which JSON writes as arrays), made in C: a seal digests every one."""
    return list(map(dict, map(zip, repeat(_FINDING_FIELDS), map(_finding_values, findings))))


def _engine(e: m.EngineAnswer | None) -> dict | None:
    if e is None:
        return None
    return {"quote_corrections": [{"after": c.after, "before": c.before, "finding": c.finding} for c in e.quote_corrections],
            "report": None if e.report is None else _findings(e.report),
            "reviewers": [{"findings": _findings(r.findings), "id": r.id} for r in e.reviewers],
            "status": e.status}


def answer_form(answer: m.Answer) -> dict:
    """What of an answer is scored and shown: the engine's answer and its rerun, every finding with its wording (every
    dict's keys in sorted order)."""
    return {"answer": _engine(answer.answer), "rerun": _engine(answer.rerun)}


def answer_digest(answer: m.Answer) -> str:
    """digest(answer_form(answer)), its dicts written in the order they were made, which is sorted already."""
    return hashlib.sha256(_ANSWERS.encode(answer_form(answer)).encode("utf-8")).hexdigest()


def case_digests(records: m.Records, case_versions) -> dict[str, dict[str, str]]:
    """The digests of each case version's parts: the same for every run of its suite, so a pass takes them once."""
    return {cv: {part: digest(value) for part, value in case_parts(records.case_versions[cv]).items()} for cv in case_versions}


def seal_run(records: m.Records, run_id: str, *, cases: Mapping[str, Mapping[str, str]] | None = None) -> m.Seal:
    """The seal of one run as the records stand now (`cases`: case_digests taken already, for some or all case versions)."""
    run = records.run(run_id)
    suite = records.suite(run.suite, run.suite_version)
    in_suite = set(suite.case_versions)
    cases = cases or {}
    missing = case_digests(records, [cv for cv in suite.case_versions if cv not in cases])
    case_versions = {cv: dict(cases[cv]) if cv in cases else missing[cv] for cv in suite.case_versions}
    pairs = {p.id: digest({"kind": p.kind, "versions": list(p.versions), "rules_differ": p.rules_differ})
             for p in records.pairs if p.versions[0] in in_suite and p.versions[1] in in_suite}
    answers: dict[str, dict[str, str]] = {}
    given = run_answers(records.answers, run.id)
    for cv in suite.case_versions:
        # equal answers recur across a case version's repetitions, and come from the spool as the very same objects:
        # each distinct pair of engine answers is digested once, found by identity rather than by hashing it whole
        seen: list[tuple[m.EngineAnswer, m.EngineAnswer | None, str]] = []
        for rep in range(1, run.repetitions + 1):
            answer = given.get((cv, rep))
            if answer is None:
                continue
            for engine, rerun, found in seen:
                if engine is answer.answer and rerun is answer.rerun:
                    break
            else:
                found = answer_digest(answer)
                seen.append((answer.answer, answer.rerun, found))
            answers.setdefault(cv, {})[str(rep)] = found
    fields = {path: digest(getattr(run, attribute)) for path, attribute in RUN_FIELDS}
    return m.Seal(fields, records.setups[run.setup].fingerprint, case_versions, pairs, answers)


@dataclass(frozen=True)
class SealChange:
    """One sealed input that no longer has its digest: what it is, and whether it changed, went or came."""

    kind: str  # run | setup | case_version | pair | answer
    key: tuple[str, ...]  # (field path) | () | (case version, part) | (pair) | (case version, repetition)
    change: str  # changed | removed | added
    was: str = ""  # the sealed value where the seal holds it itself (a setup's fingerprint)


def compare_seal(sealed: m.Seal, fresh: m.Seal) -> tuple[SealChange, ...]:
    """Every input whose digest differs from the sealed one, in a fixed order."""
    changes: list[SealChange] = []

    def mapping(kind: str, old: Mapping[str, str], new: Mapping[str, str], prefix: tuple[str, ...] = ()) -> None:
        for name in sorted(set(old) | set(new)):
            if name not in new:
                changes.append(SealChange(kind, prefix + (name,), "removed"))
            elif name not in old:
                changes.append(SealChange(kind, prefix + (name,), "added"))
            elif old[name] != new[name]:
                changes.append(SealChange(kind, prefix + (name,), "changed"))

    mapping("run", sealed.run, fresh.run)
    if sealed.setup_fingerprint != fresh.setup_fingerprint:
        changes.append(SealChange("setup", (), "changed", sealed.setup_fingerprint))
    for cv in sorted(set(sealed.case_versions) | set(fresh.case_versions)):
        if cv not in fresh.case_versions or cv not in sealed.case_versions:
            changes.append(SealChange("case_version", (cv,), "removed" if cv not in fresh.case_versions else "added"))
        else:
            mapping("case_version", sealed.case_versions[cv], fresh.case_versions[cv], (cv,))
    mapping("pair", sealed.pairs, fresh.pairs)
    for cv in sorted(set(sealed.answers) | set(fresh.answers)):
        mapping("answer", sealed.answers.get(cv, {}), fresh.answers.get(cv, {}), (cv,))
    return tuple(changes)


class _Places:
    """Records files parsed again only to place a problem, once each."""

    def __init__(self, records: m.Records):
        self.records = records
        self.docs: dict[str, JsonText | None] = {}

    def doc(self, name: str) -> JsonText | None:
        if name not in self.docs:
            source = self.records.files.get(name)
            self.docs[name] = None if source is None else parse_json(source.path, source.data)[0]
        return self.docs[name]

    def at(self, name: str, find, tail: str, message: str) -> Diagnostic:
        """At the item of `name`'s list that `find` picks (its pointer and index), then `tail` below it."""
        doc = self.doc(name)
        source = self.records.files.get(name)
        path = source.path if source else name
        pointer = find(doc.value) if doc is not None else None
        if pointer is None:
            return Diagnostic(path, None, None, None, message, "seal.changed")
        return doc.diagnostic(pointer + tail, message, "seal.changed")


def _index(items: list, test) -> int | None:
    return next((i for i, item in enumerate(items) if test(item)), None)


def _item(list_key: str, test):
    def find(value) -> str | None:
        index = _index(value.get(list_key, []), test) if isinstance(value, dict) else None
        return None if index is None else f"/{list_key}/{index}"
    return find


def locate_seal_changes(records: m.Records, changes: Mapping[str, tuple[SealChange, ...]]) -> list[Diagnostic]:
    """One located diagnostic per changed place in the edited record, naming every sealed run it breaks."""
    by_place: dict[SealChange, list[str]] = {}
    for run_id in sorted(changes):
        for change in changes[run_id]:
            by_place.setdefault(change, []).append(run_id)
    places = _Places(records)
    out: list[Diagnostic] = []
    for change, run_ids in by_place.items():
        runs = ", ".join(f'"{r}"' for r in run_ids)
        after = (f"after run {runs} was sealed" if len(run_ids) == 1 else f"after runs {runs} were sealed")
        mend = ("; restore it, or delete the run's entry from results.json in the same change and score it again"
                if len(run_ids) == 1 else "; restore it, or delete those runs' entries from results.json and score them again")
        first = records.run(run_ids[0]) if any(r.id == run_ids[0] for r in records.runs) else None
        if change.kind == "run":
            field = change.key[0]
            out.append(places.at("runs.json", _item("runs", lambda r: r.get("id") == run_ids[0]), f"/{field}",
                                 f'run "{run_ids[0]}" changed its {field.replace("/", " ")} after it was sealed'
                                 + mend.replace("the run's", "its")))
        elif change.kind == "setup":
            setup = first.setup if first else ""
            out.append(places.at("setups.json", _item("setups", lambda s: s.get("id") == setup), "/configuration",
                                 f'run setup "{setup}" changed its configuration {after} (sealed fingerprint {change.was}, '
                                 f'now {records.setups[setup].fingerprint if setup in records.setups else "none"})' + mend))
        elif change.kind == "case_version":
            cv = change.key[0]
            part = change.key[1] if len(change.key) > 1 else None
            if change.change == "changed" and part:
                message = f'case version "{cv}" changed its {part} {after}'
                out.append(places.at("cases.json", _item("case_versions", lambda c: c.get("id") == cv), f"/{part}", message + mend))
            else:
                what = "was removed from" if change.change == "removed" else "was added to"
                run = first
                out.append(places.at("cases.json", _item("suites", lambda s: run is not None and s.get("id") == run.suite
                                                        and s.get("version") == run.suite_version), "/case_versions",
                                     f'case version "{cv}" {what} the suite {after}' + mend))
        elif change.kind == "pair":
            pair = change.key[0]
            out.append(places.at("cases.json", _item("pairs", lambda p: p.get("id") == pair), "",
                                 f'pair "{pair}" {"changed" if change.change == "changed" else "was " + change.change} {after}'
                                 + mend))
        else:
            cv, rep = change.key
            for run_id in run_ids:  # an answer belongs to one run: each run's answer is its own place
                name = records.answers.source((run_id, cv, int(rep))) or records.config.answers[0]
                message = (f'answer of run "{run_id}" to case version "{cv}" repetition {rep} '
                           f'{"changed" if change.change == "changed" else "was " + change.change} after the run was sealed'
                           + mend.replace("the run's", "its"))
                out.append(places.at(name, _item("answers", lambda a, r=run_id: a.get("run") == r and a.get("case_version") == cv
                                                 and a.get("repetition") == int(rep)), "", message))
    return out


def check_seals(records: m.Records, results: Mapping[str, m.RunResult]) -> list[Diagnostic]:
    """Every sealed input of every sealed result that differs from the records now, located (unsealed results pass).

    For `sitegen verify` too: it needs only Records loaded from the published cases, answers and run metadata.
    """
    known = {r.id for r in records.runs}
    changes = {}
    for run_id, result in results.items():
        if result.seal is not None and run_id in known:
            found = compare_seal(result.seal, seal_run(records, run_id))
            if found:
                changes[run_id] = found
    return locate_seal_changes(records, changes)
