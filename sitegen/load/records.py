"""Reads every records file, checks it against its schema and against the others, and reports all problems at once."""

from __future__ import annotations

import gc
import hashlib
import json
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType
from typing import Callable

from sitegen.core import model as m
from sitegen.core.collector import collector_paused
from sitegen.core.errors import Diagnostic, RecordsError
from sitegen.load.jsonread import JsonText, NotStreamable, parse_json, read_json_text
from sitegen.load.schema import did_you_mean as _hint
from sitegen.load.schema import checked_items, validate
from sitegen.load.spool import AnswerSpool, PackedRun, pack_answers
from sitegen.core.text import DocumentText, collapse

CONFIG_FILE = "sitegen.json"
SETUPS_FILE = "setups.json"
RUNS_FILE = "runs.json"
CASES_FILE = "cases.json"
RESULTS_FILE = "results.json"
CHANGELOG_DIR = "changelog"
# A run's page for one case is cases/<xx>/<case version>/<run>.html, beside that case's index.html.
RESERVED_RUN_IDS = frozenset({"index"})


def fingerprint(configuration: object) -> str:
    """SHA-256 of the canonical JSON of a run setup's configuration."""
    return hashlib.sha256(canonical_configuration(configuration).encode("utf-8")).hexdigest()


def canonical_configuration(configuration: object) -> str:
    return json.dumps(configuration, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


class _Collector:
    """Gathers diagnostics from every file so the loader can fail once, with all of them."""

    def __init__(self) -> None:
        self.diagnostics: list[Diagnostic] = []

    def add(self, diagnostic: Diagnostic) -> None:
        self.diagnostics.append(diagnostic)

    def at(self, doc: JsonText, pointer: str, message: str, code: str) -> None:
        self.diagnostics.append(doc.diagnostic(pointer, message, code))

    def file(self, path: str, message: str, code: str) -> None:
        self.diagnostics.append(Diagnostic(path, None, None, None, message, code))


def _read(root: Path, name: str, schema: str, out: _Collector, files: dict[str, m.SourceFile], *,
          internal: frozenset[str] = frozenset(), checked: Callable[[object], object] | None = None) -> JsonText | None:
    """One records file read, parsed strictly and checked against its schema (or `checked` of its value is: a stand-in
    with the same places); None, with the problems in `out`, when any of that fails."""
    path = root / name
    shown = str(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        out.file(shown, f"file is missing (expected the {schema} records here)", "record.file-missing")
        return None
    except OSError as exc:
        out.file(shown, f"cannot read file: {exc.strerror}", "record.file-unreadable")
        return None
    files[name] = m.SourceFile(shown, hashlib.sha256(data).hexdigest(), len(data))
    doc, problems = parse_json(shown, data)
    if problems:
        out.diagnostics.extend(problems)
        return None
    before = len(out.diagnostics)

    def report(pointer: str, message: str, code: str) -> None:
        key = pointer.rsplit("/", 1)[-1]
        if code == "record.unknown-field" and key in internal:
            message, code = f'internal field "{key}" must never reach a published file', "publish.internal-field"
        out.at(doc, pointer, message, code)

    validate(schema, checked(doc.value) if checked else doc.value, report)
    return doc if len(out.diagnostics) == before else None


def load_records(root: Path | str, *, jobs: int = 1) -> m.Records:
    """Load and cross-check every records file under root; raise RecordsError listing every problem.

    With jobs > 1 the answers files are read in that many forked processes; records and problems are the same for any jobs.
    """
    # Loading builds millions of small objects that all stay alive; collecting garbage meanwhile only rescans them.
    # They live as long as the process does, so they are then frozen out of the collector's sight as well.
    with collector_paused():
        records = _load(Path(root), jobs)
        gc.freeze()
        return records


def _require_folder(root: Path) -> None:
    if not root.is_dir():
        raise RecordsError([Diagnostic(str(root), None, None, None, "records folder does not exist", "record.folder-missing")])


def _load(root: Path, jobs: int) -> m.Records:
    out = _Collector()
    files: dict[str, m.SourceFile] = {}
    _require_folder(root)

    config_doc = _read(root, CONFIG_FILE, "config", out, files)
    setups_doc = _read(root, SETUPS_FILE, "setups", out, files)
    runs_doc = _read(root, RUNS_FILE, "runs", out, files)
    config = _config(config_doc, root, out) if config_doc else None
    internal = frozenset(config.internal_fields) if config else frozenset()
    published_names = {p.record for p in config.publish} if config else set()
    cases_doc = _read(root, CASES_FILE, "cases", out, files, internal=internal if CASES_FILE in published_names else frozenset())
    if config is not None:
        for index, published in enumerate(config.publish):
            if published.record != RESULTS_FILE and published.record not in files and not (root / published.record).is_file():
                out.at(config_doc, f"/publish/{index}/record", f'published record "{published.record}" does not exist', "record.dangling-file")
    results_path = root / RESULTS_FILE
    if results_path.is_file():
        data = results_path.read_bytes()
        files[RESULTS_FILE] = m.SourceFile(str(results_path), hashlib.sha256(data).hexdigest(), len(data))
        del data  # read again when needed: at scale it is the largest file, and most commands never look at it

    setups = _setups(setups_doc, out) if setups_doc else None
    suites, case_versions, pairs = _cases(cases_doc, out) if cases_doc else ((), None, ())
    runs = _runs(runs_doc, out, setups=setups or {}, suites=suites) if runs_doc else None
    answers = AnswerSpool()
    broken_answers: list[str] = []
    if config is not None:
        # every answers file is checked in itself and against whatever of the other records loaded; only the checks
        # that need a broken file's content wait (a note at that file says which)
        context = _AnswersContext(root, None if runs is None else {r.id: r for r in runs},
                                  None if cases_doc is None else {(s.id, s.version): s for s in suites}, case_versions, setups)
        tasks = tuple(_AnswersTask(name, internal if name in published_names else frozenset(), name in published_names)
                      for name in _readable_answers(config, root))
        if jobs > 1 and len(tasks) > 1:
            broken_answers = _read_answers_apart(context, tasks, out, files, answers, jobs=jobs)
        else:
            broken_answers = _read_answers_here(context, tasks, out, files, answers)
        if not broken_answers and runs is not None and context.suites is not None:
            _completeness(runs_doc, runs, answers, context.suites, out)
    _note_waiting(root, out, config=config_doc is not None, setups=setups_doc is not None, runs=runs_doc is not None,
                  cases=cases_doc is not None, answers=broken_answers, several=config is not None and len(config.answers) > 1)
    runs = runs or ()
    setups = setups or {}
    case_versions = case_versions or {}

    entries: tuple[m.Entry, ...] = ()
    if (root / CHANGELOG_DIR).is_dir():
        from sitegen.load.entries import load_entries

        try:
            entries = load_entries(root / CHANGELOG_DIR)
        except RecordsError as exc:
            out.diagnostics.extend(exc.diagnostics)

    if out.diagnostics:
        raise RecordsError(out.diagnostics)
    return m.Records(
        config=config,
        suites=suites,
        case_versions=MappingProxyType(case_versions),
        pairs=pairs,
        setups=MappingProxyType(setups),
        runs=runs,
        answers=answers,
        entries=entries,
        files=MappingProxyType(files),
    )


def _inside(root: Path, name: str) -> bool:
    """Whether the records file `name` stays inside the records folder once symbolic links are followed."""
    try:
        return (root / name).resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):  # a loop of symbolic links
        return False


def _readable_answers(config: m.Config, root: Path) -> tuple[str, ...]:
    """The answers files to read: those the configuration names inside the records folder (_config refuses the others)."""
    return tuple(name for name in config.answers if _inside(root, name))


_WAITING = {
    CONFIG_FILE: "the answers files it names, and the internal fields of the published files",
    SETUPS_FILE: "the runs' setups, and whether each answer needs a report (the merge)",
    RUNS_FILE: "the answers' runs, repetitions, statuses and reports, the answers of unpublished runs in published files, "
               "and whether every completed published run has all its answers",
    CASES_FILE: "the runs' suite versions, the answers' case versions, and whether every completed published run has all its answers",
}


def _note_waiting(root: Path, out: _Collector, *, config: bool, setups: bool, runs: bool, cases: bool, answers: list[str],
                  several: bool) -> None:
    """One note at each records file that did not load, saying which checks of the other files wait until it does."""
    loaded = {CONFIG_FILE: config, SETUPS_FILE: setups, RUNS_FILE: runs, CASES_FILE: cases}
    waiting = dict(_WAITING)
    if not config:
        waiting[SETUPS_FILE] = "the runs' setups"  # no answers file was read at all
        waiting[RUNS_FILE] = None
        waiting[CASES_FILE] = "the runs' suite versions"

    def note(name: str, what: str) -> None:
        path = str(root / name)
        first = next((d for d in out.diagnostics if d.path == path), None)  # placed at the file's first problem
        line, column = (first.line, first.column) if first else (None, None)
        out.add(Diagnostic(path, line, column, None, f"not checked until this file loads: {what}", "record.checks-waited", "note"))

    for name, ok in loaded.items():
        if not ok and waiting[name] and (root / name).is_file():
            note(name, waiting[name])
    waited = [what for what, needed in (("whether every completed published run has all its answers", runs and cases),
                                        ("whether its answers also stand in another answers file", several)) if needed]
    for name in answers if waited else ():
        note(name, ", and ".join(waited))


def _config(doc: JsonText, root: Path, out: _Collector) -> m.Config:
    v = doc.value
    for index, name in enumerate(v["answers"]):
        if not _inside(root, name):
            out.at(doc, f"/answers/{index}", f'answers file "{name}" lies outside the records folder {root}', "record.outside-records")
    publishable = {CASES_FILE, RESULTS_FILE, *v["answers"]}
    for index, p in enumerate(v["publish"]):
        if not _inside(root, p["record"]):
            out.at(doc, f"/publish/{index}/record", f'published record "{p["record"]}" lies outside the records folder {root}',
                   "record.outside-records")
        elif p["record"] not in publishable:
            out.at(doc, f"/publish/{index}/record", f'"{p["record"]}" is not a record meant for publication: only {CASES_FILE}, '
                   f"{RESULTS_FILE} and the answers files the configuration names may be published", "publish.not-publishable")
    for language in v["languages"]:
        if language not in v["title"]:
            out.at(doc, "/title", f'no title for language "{language}"', "record.missing-field")
    if v["default_language"] not in v["languages"]:
        out.at(doc, "/default_language", f'"{v["default_language"]}" is not among the languages', "record.value")
    names = Counter(p["name"] for p in v["publish"])
    for index, p in enumerate(v["publish"]):
        if names[p["name"]] > 1:
            out.at(doc, f"/publish/{index}/name", f'"{p["name"]}" is published twice', "record.duplicate-id")
    return m.Config(
        title=MappingProxyType(dict(v["title"])),
        base_url=v["base_url"],
        languages=tuple(v["languages"]),
        default_language=v["default_language"],
        source_repository=v["source_repository"],
        answers=tuple(v["answers"]),
        publish=tuple(m.PublishedFile(p["record"], p["name"]) for p in v["publish"]),
        internal_fields=tuple(v["internal_fields"]),
        document_language=v.get("document_language"),
        case_text_language=v.get("case_text_language"),
        accessibility_contact=v.get("accessibility_contact"),
    )


def _duplicates(doc: JsonText, items: list, pointer: str, what: str, out: _Collector, key=lambda x: x["id"]) -> None:
    seen: dict[object, int] = {}
    for index, item in enumerate(items):
        k = key(item)
        if k in seen:
            shown = k if isinstance(k, str) else " version ".join(str(p) for p in k)
            out.at(doc, f"{pointer}/{index}/id", f'duplicate {what} id "{shown}" (first at {pointer}/{seen[k]})', "record.duplicate-id")
        else:
            seen[k] = index


def _setups(doc: JsonText, out: _Collector) -> dict[str, m.Setup]:
    items = doc.value["setups"]
    _duplicates(doc, items, "/setups", "run setup", out)
    setups = {}
    for index, s in enumerate(items):
        computed = fingerprint(s["configuration"])
        if computed != s["fingerprint"]:
            out.at(doc, f"/setups/{index}/fingerprint",
                   f"fingerprint does not match the configuration: stored {s['fingerprint'][:12]}…, computed {computed} "
                   "(sitegen computes it; run `sitegen fingerprint` to print it)", "record.fingerprint")
        setups.setdefault(s["id"], m.Setup(s["id"], canonical_configuration(s["configuration"]), computed, s["configuration"]["merge"]))
    return setups


@dataclass(frozen=True)
class SetupFingerprint:
    """A run setup's fingerprint as computed from its configuration, and what setups.json stores (None: nothing)."""

    setup: str
    computed: str
    stored: str | None

    @property
    def matches(self) -> bool:
        return self.stored == self.computed


def setup_fingerprints(root: Path | str) -> tuple[SetupFingerprint, ...]:
    """Every setup's fingerprint from setups.json alone, in file order, beside the one it stores.

    For `sitegen fingerprint`, which is how a new or edited setup gets its fingerprint: a stored fingerprint that is
    missing, malformed or stale is therefore no problem here. Anything else wrong with setups.json (unreadable, not
    JSON, a setup without a valid configuration, a repeated id) is, and raises RecordsError with located diagnostics.
    """
    root = Path(root)
    _require_folder(root)
    out = _Collector()
    doc = _read(root, SETUPS_FILE, "setups", out, {}, checked=_with_computed_fingerprints)
    if doc is not None:
        _duplicates(doc, doc.value["setups"], "/setups", "run setup", out)
    if out.diagnostics:
        raise RecordsError(out.diagnostics)
    return tuple(SetupFingerprint(s["id"], fingerprint(s["configuration"]), _stored(s)) for s in doc.value["setups"])


def _with_computed_fingerprints(value: object) -> object:
    """setups.json as it would be with every fingerprint right, to check everything else in it at the same places."""
    if not isinstance(value, dict) or not isinstance(value.get("setups"), list):
        return value
    setups = [dict(s, fingerprint=fingerprint(s.get("configuration"))) if isinstance(s, dict) else s for s in value["setups"]]
    return dict(value, setups=setups)


def _stored(setup: dict) -> str | None:
    if "fingerprint" not in setup:
        return None
    stored = setup["fingerprint"]
    return stored if isinstance(stored, str) else json.dumps(stored)


def _passage(doc: JsonText, pointer: str, raw: dict | None, text: DocumentText, out: _Collector) -> m.Passage | None:
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


def _cases(doc: JsonText, out: _Collector):
    v = doc.value
    _duplicates(doc, v["suites"], "/suites", "suite", out, key=lambda s: (s["id"], s["version"]))
    _duplicates(doc, v["case_versions"], "/case_versions", "case version", out)
    _duplicates(doc, v["pairs"], "/pairs", "pair", out)
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


def _runs(doc: JsonText, out: _Collector, *, setups: dict, suites: tuple[m.Suite, ...]) -> tuple[m.Run, ...]:
    items = doc.value["runs"]
    _duplicates(doc, items, "/runs", "run", out)
    suite_keys = {(s.id, s.version) for s in suites}
    runs = []
    for index, r in enumerate(items):
        pointer = f"/runs/{index}"
        if r["id"] in RESERVED_RUN_IDS:
            out.at(doc, f"{pointer}/id", f'run id "{r["id"]}" is taken by the site: a run\'s page beside a case page would be '
                   f"cases/…/{r['id']}.html, the case page itself; choose another", "record.reserved-id")
        if setups and r["setup"] not in setups:
            out.at(doc, f"{pointer}/setup", f'unknown run setup "{r["setup"]}"{_hint(r["setup"], setups)}', "record.dangling-reference")
        if suites and (r["suite"], r["suite_version"]) not in suite_keys:
            out.at(doc, f"{pointer}/suite_version", f'unknown suite version "{r["suite"]}" version {r["suite_version"]}', "record.dangling-reference")
        scorer = r["scorer"]
        expected_method = m.MATCHING_METHODS.get(scorer["version"])
        if expected_method is None:
            known = ", ".join(str(k) for k in sorted(m.MATCHING_METHODS))
            out.at(doc, f"{pointer}/scorer/version", f"unknown scorer version {scorer['version']} (this sitegen knows {known})", "record.scorer-version")
        elif scorer["matching_method"] != expected_method:
            out.at(doc, f"{pointer}/scorer/matching_method",
                   f'scorer version {scorer["version"]} uses matching method "{expected_method}", not "{scorer["matching_method"]}"', "record.matching-method")
        runs.append(m.Run(
            id=r["id"], date=r["date"], setup=r["setup"], suite=r["suite"], suite_version=r["suite_version"],
            scorer_version=scorer["version"], matching_method=scorer["matching_method"],
            report_version=r["report"]["version"], runner_version=r["report"]["runner"], run_record_version=r["report"]["run_record"],
            assessment_version=r["assessment"]["version"], policy=r["assessment"]["policy"], engine_version=r["engine_version"],
            repetitions=r["repetitions"], published=r["published"], status=r["status"],
        ))
    return tuple(runs)


_KINDS = {m.FLAW: m.FLAW, m.STRENGTH: m.STRENGTH}


class _Shared(dict):
    """One copy of each repeated value: the same quote, wording or span recurs in every repetition and run."""

    def one(self, value):
        return self.setdefault(value, value)


def _finding(raw: dict, trace: bool, shared: _Shared) -> m.Finding:
    location = raw["location"]
    intern = sys.intern  # ids and rule names repeat across hundreds of thousands of answers
    quote = raw["quote"]
    return m.Finding(
        id=intern(raw["id"]), kind=_KINDS[raw["kind"]], rule=intern(raw["rule"]),
        supporting_rules=shared.one(tuple(intern(x) for x in raw["supporting_rules"])) if raw["supporting_rules"] else (),
        missing=raw["missing"], quote=shared.one(quote) if quote is not None else None,
        location=shared.one(tuple(location["lines"])) if location else None,
        wording=shared.one(raw["wording"]),
        trace=shared.one(tuple(intern(x) for x in raw["trace"])) if trace and raw["trace"] else (),
    )


def _engine_answer(doc: JsonText, pointer: str, raw: dict, out: _Collector, *, merge: bool | None, shared: _Shared) -> m.EngineAnswer:
    # pointers are spelled out only when something is wrong: this runs for every answer of every run
    ids: dict[str, str] = {}
    reviewers = []
    reviewer_ids: set[str] = set()
    for r_index, reviewer in enumerate(raw["reviewers"]):
        if reviewer["id"] in reviewer_ids:
            out.at(doc, f"{pointer}/reviewers/{r_index}/id", f'duplicate reviewer id "{reviewer["id"]}"', "record.duplicate-id")
        reviewer_ids.add(reviewer["id"])
        findings = []
        for f_index, f in enumerate(reviewer["findings"]):
            fid = f["id"]
            if fid in ids:
                out.at(doc, f"{pointer}/reviewers/{r_index}/findings/{f_index}/id",
                       f'duplicate finding id "{fid}" (first at {ids[fid]})', "record.duplicate-id")
            else:
                ids[fid] = f"reviewer {reviewer['id']}"
            location = f["location"]
            if location and location["lines"][0] > location["lines"][1]:
                out.at(doc, f"{pointer}/reviewers/{r_index}/findings/{f_index}/location/lines",
                       "a location's first line comes after its last line", "record.line-span")
            findings.append(_finding(f, False, shared))
        reviewers.append(m.Reviewer(sys.intern(reviewer["id"]), tuple(findings)))
    reviewer_finding_ids = set(ids)
    for c_index, correction in enumerate(raw["quote_corrections"]):
        if correction["finding"] not in reviewer_finding_ids:
            out.at(doc, f"{pointer}/quote_corrections/{c_index}/finding",
                   f'quote correction for unknown reviewer finding "{correction["finding"]}"{_hint(correction["finding"], reviewer_finding_ids)}',
                   "record.dangling-reference")
    report = None
    if raw["report"] is not None:
        report_findings = []
        for f_index, f in enumerate(raw["report"]["findings"]):
            fid = f["id"]
            if fid in ids:
                out.at(doc, f"{pointer}/report/findings/{f_index}/id", f'duplicate finding id "{fid}" (first at {ids[fid]})',
                       "record.duplicate-id")
            else:
                ids[fid] = "the report"
            for t_index, target in enumerate(f["trace"]):
                if target not in reviewer_finding_ids:
                    out.at(doc, f"{pointer}/report/findings/{f_index}/trace/{t_index}",
                           f'trace to non-existent reviewer finding "{target}"{_hint(target, reviewer_finding_ids)}', "record.dangling-trace")
            location = f["location"]
            if location and location["lines"][0] > location["lines"][1]:
                out.at(doc, f"{pointer}/report/findings/{f_index}/location/lines",
                       "a location's first line comes after its last line", "record.line-span")
            report_findings.append(_finding(f, True, shared))
        report = tuple(report_findings)
    if raw["status"] != m.COMPLETED and ids:
        # a crashed answer (or rerun) finished nothing, so it can have given no findings: any it carries were made up
        out.at(doc, f"{pointer}/status", f"the answer crashed, so it cannot carry findings (it has {len(ids)})", "record.crashed-findings")
    if merge is not None and raw["status"] == m.COMPLETED:
        if merge and report is None:
            out.at(doc, f"{pointer}/report", "the run goes through the merge, so the answer needs a report", "record.report-missing")
        elif not merge and report is not None:
            out.at(doc, f"{pointer}/report", "the run does not go through the merge, so report must be null", "record.report-unexpected")
    corrections = tuple(m.QuoteCorrection(c["finding"], c["before"], c["after"]) for c in raw["quote_corrections"]) if raw["quote_corrections"] else ()
    return m.EngineAnswer(raw["status"], tuple(reviewers), corrections, report)


@dataclass(frozen=True)
class _AnswersContext:
    """What checking an answers file needs from the records read before it; forked workers inherit it."""

    root: Path
    runs: dict[str, m.Run] | None  # None: that records file did not load, so the checks against it wait
    suites: dict[tuple[str, int], m.Suite] | None
    case_versions: dict[str, m.CaseVersion] | None
    setups: dict[str, m.Setup] | None


@dataclass(frozen=True)
class _AnswersTask:
    """One answers file to read, and how the configuration publishes it."""

    name: str
    internal: frozenset[str]
    published: bool


@dataclass(frozen=True)
class _AnswersRead:
    """What a worker sends back for one answers file: never the answers themselves, only their packed runs."""

    source: m.SourceFile | None
    diagnostics: tuple[Diagnostic, ...]
    packed: tuple[PackedRun, ...] | None  # None when the file could not be read or failed its schema


def _read_one(context: _AnswersContext, task: _AnswersTask, out: _Collector, files: dict[str, m.SourceFile], earlier: AnswerSpool,
              shared: _Shared) -> dict[tuple[str, str, int], m.Answer] | None:
    """One answers file, read the same way here and in a worker."""
    return _read_answers(context.root, task.name, out, files, earlier, internal=task.internal, runs=context.runs,
                         suites=context.suites, case_versions=context.case_versions, setups=context.setups,
                         published=task.published, shared=shared)


def _read_answers_here(context: _AnswersContext, tasks: tuple[_AnswersTask, ...], out: _Collector, files: dict[str, m.SourceFile],
                       answers: AnswerSpool) -> list[str]:
    """Every answers file in this process; the names of those that could not be read."""
    broken = []
    shared = _Shared()
    for task in tasks:
        # one answers file at a time, one answer at a time: only this file's answers are alive, then they are packed
        read = _read_one(context, task, out, files, answers, shared)
        if read is not None:
            answers.add(read.values())
        if read is None:
            broken.append(task.name)
        del read
    return broken


def _read_answers_apart(context: _AnswersContext, tasks: tuple[_AnswersTask, ...], out: _Collector, files: dict[str, m.SourceFile],
                        answers: AnswerSpool, *, jobs: int) -> list[str]:
    """Every answers file in forked workers, taken in file order; the names of those that could not be read.

    A worker checks its file against the records but not against the other answers files. Should one of its answers
    already stand in an earlier file, the file is read again here, against those, so the problems are as with one process.
    """
    from sitegen.core.workers import ordered_map

    broken = []
    for task, read in zip(tasks, ordered_map(_read_in_worker, tasks, jobs=jobs, context=context)):
        if read.packed is not None and _any_earlier(read.packed, answers):
            read = _read_packed(context, task, answers)
        if not _take(read, task.name, out, files, answers):
            broken.append(task.name)
    return broken


def _read_packed(context: _AnswersContext, task: _AnswersTask, earlier: AnswerSpool) -> _AnswersRead:
    """One answers file read, checked against the records and the `earlier` answers, and packed."""
    out, files = _Collector(), {}
    read = _read_one(context, task, out, files, earlier, _Shared())
    return _AnswersRead(files.get(task.name), tuple(out.diagnostics), None if read is None else pack_answers(read.values()))


def _take(read: _AnswersRead, name: str, out: _Collector, files: dict[str, m.SourceFile], answers: AnswerSpool) -> bool:
    """Add what was read of one answers file, as reading it here would have; whether it could be read."""
    if read.source is not None:
        files[name] = read.source
    out.diagnostics.extend(read.diagnostics)
    if read.packed is not None:
        answers.add_packed(read.packed)
    return read.packed is not None


def _any_earlier(packed: tuple[PackedRun, ...], answers: AnswerSpool) -> bool:
    """Whether any of these answers was already read from an earlier file."""
    return any((part.run, case_version, repetition) in answers for part in packed for case_version, repetition, _ in part.keys)


def _read_in_worker(context: _AnswersContext, task: _AnswersTask) -> _AnswersRead:
    """One answers file read, checked and packed in a worker, against no other answers file."""
    return _read_packed(context, task, AnswerSpool())


def _read_answers(root: Path, name: str, out: _Collector, files: dict[str, m.SourceFile], earlier: AnswerSpool, *,
                  internal: frozenset[str], **context) -> dict[tuple[str, str, int], m.Answer] | None:
    """One answers file read answer by answer (never its whole tree at once); None when it cannot be read or fails its schema.

    Anything unusual (bad JSON, a schema problem) sends the file through _read instead, which parses it whole and
    reports exactly what is wrong, as for every other records file.
    """
    path = root / name
    try:
        data = path.read_bytes()
    except OSError:
        data = None
    if data is not None:
        doc, problems = read_json_text(str(path), data)
        if not problems:
            files[name] = m.SourceFile(str(path), hashlib.sha256(data).hexdigest(), len(data))
            del data
            found = _Collector()
            try:
                read = _answers(doc, checked_items(doc, "answers", "answers"), name, found, earlier, **context)
            except NotStreamable:
                pass
            else:
                out.diagnostics.extend(found.diagnostics)
                return read
    doc = _read(root, name, "answers", out, files, internal=internal)
    return None if doc is None else _answers(doc, enumerate(doc.value["answers"]), name, out, earlier, **context)


def _answers(doc: JsonText, items, name: str, out: _Collector, earlier: AnswerSpool, *, runs: dict, suites: dict, case_versions: dict,
             setups: dict, published: bool, shared: _Shared) -> dict[tuple[str, str, int], m.Answer]:
    """The answers of one file, checked against the records and against the answers of the files read before it."""
    answers: dict[tuple[str, str, int], m.Answer] = {}
    members = {key: frozenset(suite.case_versions) for key, suite in (suites or {}).items()}  # a suite holds up to thousands
    leaked: dict[str, list] = {}  # unpublished run -> [pointer of its first answer here, how many answers]
    for index, a in items:
        pointer = f"/answers/{index}"
        run = runs.get(a["run"]) if runs is not None else None
        if runs is not None and run is None:
            out.at(doc, f"{pointer}/run", f'answer for unknown run "{a["run"]}"{_hint(a["run"], runs)}', "record.dangling-reference")
            continue
        if run is not None and published and not run.published:
            leaked.setdefault(run.id, [f"{pointer}/run", 0])[1] += 1
        if case_versions is not None and a["case_version"] not in case_versions:
            out.at(doc, f"{pointer}/case_version", f'answer for unknown case version "{a["case_version"]}"{_hint(a["case_version"], case_versions)}',
                   "record.dangling-reference")
            continue
        suite = members.get((run.suite, run.suite_version)) if run is not None else None
        if suite is not None and a["case_version"] not in suite:
            out.at(doc, f"{pointer}/case_version", f'case version "{a["case_version"]}" is not in suite {run.suite} version {run.suite_version}',
                   "record.dangling-reference")
        if run is not None and a["repetition"] > run.repetitions:
            out.at(doc, f"{pointer}/repetition", f"repetition {a['repetition']} but run {run.id} has {run.repetitions}", "record.repetition")
        setup = setups.get(run.setup) if run is not None and setups is not None else None
        merge = setup.merge if setup else None
        key = (a["run"], a["case_version"], a["repetition"])
        if key in answers or key in earlier:
            also = answers[key].source if key in answers else earlier.source(key)
            out.at(doc, pointer, f"duplicate answer for run {key[0]}, case version {key[1]}, repetition {key[2]} (also in {also})",
                   "record.duplicate-id")
            continue
        if run is not None and run.status == m.COMPLETED and a["status"] != m.COMPLETED:
            out.at(doc, f"{pointer}/status", f"run {run.id} completed, so its answers must be completed; mark the run crashed instead",
                   "record.crashed-answer")
        answer = _engine_answer(doc, pointer, a, out, merge=merge, shared=shared)
        rerun = None
        if a["rerun"] is not None:
            rerun = _engine_answer(doc, f"{pointer}/rerun", a["rerun"], out, merge=merge, shared=shared)
        answers[key] = m.Answer(a["run"], a["case_version"], a["repetition"], answer, rerun, name)
    for run_id, (first, count) in leaked.items():  # once per run: a leaked run has as many answers as cases times repetitions
        more = f" (and {count - 1} more of its answers in this file)" if count > 1 else ""
        out.at(doc, first, f'answer of unpublished run "{run_id}" in a published file{more}', "publish.unpublished-run")
    return answers


def _completeness(doc: JsonText, runs: tuple[m.Run, ...], answers: AnswerSpool, suites: dict, out: _Collector) -> None:
    """Every completed published run has every answer: counted from the answers there are, so no loop runs over a number
    read from the records (a run of 10**20 repetitions is refused by its schema, and never counted out here)."""
    present = Counter((run_id, cv) for run_id, cv, _ in answers)  # the answers' repetitions are checked against their run
    for index, run in enumerate(runs):
        if not run.published or run.status != m.COMPLETED:
            continue
        suite = suites.get((run.suite, run.suite_version))
        if suite is None:
            continue
        short = [(cv, run.repetitions - present[run.id, cv]) for cv in suite.case_versions if present[run.id, cv] < run.repetitions]
        if not short:
            continue
        missing = sum(count for _, count in short)
        shown = []
        for cv, _ in short[:5]:
            for rep in range(1, run.repetitions + 1):  # at most the schema's maximum, and only until five are named
                if (run.id, cv, rep) not in answers:
                    shown.append(f"{cv} repetition {rep}")
                    if len(shown) == 5:
                        break
            if len(shown) == 5:
                break
        more = f" and {missing - len(shown)} more" if missing > len(shown) else ""
        out.at(doc, f"/runs/{index}", f"completed published run {run.id} lacks {missing} answer(s): {', '.join(shown)}{more}",
               "record.answer-missing")
