"""Reads every records file, checks it against its schema and against the others, and reports all problems at once."""

from __future__ import annotations

import hashlib
from collections import Counter
from contextlib import nullcontext
from pathlib import Path
from types import MappingProxyType
from typing import Callable, ContextManager

from sitegen.core import model as m
from sitegen.core.files import read_regular
from sitegen.core.errors import Diagnostic, RecordsError
from sitegen.core.errors import did_you_mean as _hint
from sitegen.load.answercache import CheckedAnswers
from sitegen.load.answers import AnswersContext, AnswersTask, check_completeness, read_answers_apart, read_answers_here
from sitegen.load.entries import load_entries
from sitegen.load.jsonread import JsonText
from sitegen.load.keys import read_cases
from sitegen.load.reading import Collector, check_unique_ids, read_file, require_folder
from sitegen.load.setups import SETUPS_FILE, read_setups
from sitegen.load.spool import AnswerSpool

CONFIG_FILE = "sitegen.json"
RUNS_FILE = "runs.json"
CASES_FILE = "cases.json"
RESULTS_FILE = "results.json"
CHANGELOG_DIR = "changelog"
# A run's page for one case is cases/<xx>/<case version>/<run>.html, beside that case's index.html.
RESERVED_RUN_IDS = frozenset({"index"})


def load_records(root: Path | str, *, jobs: int = 1, unpacking: Callable[[], ContextManager] = nullcontext,
                 answers_cache: CheckedAnswers | None = None) -> m.Records:
    """Load and cross-check every records file under root; raise RecordsError listing every problem.

    With jobs > 1 the answers files are read in that many forked processes; records and problems are the same for any jobs.
    `unpacking` wraps each unpacking of a run's answers (the caller's collector policy: see core/collector.py).
    With `answers_cache`, an answers file checked before with the same bytes and facts is taken as it was kept
    (load/answercache.py); records and problems are the same with or without it.
    """
    return _load(Path(root), jobs, unpacking, answers_cache)


def _load(root: Path, jobs: int, unpacking: Callable[[], ContextManager], cache: CheckedAnswers | None = None) -> m.Records:
    out = Collector()
    files: dict[str, m.SourceFile] = {}
    require_folder(root)

    config_doc = read_file(root, CONFIG_FILE, "config", out, files)
    setups_doc = read_file(root, SETUPS_FILE, "setups", out, files)
    runs_doc = read_file(root, RUNS_FILE, "runs", out, files)
    config = _config(config_doc, root, out) if config_doc else None
    internal = frozenset(config.internal_fields) if config else frozenset()
    published_names = {p.record for p in config.publish} if config else set()
    cases_doc = read_file(root, CASES_FILE, "cases", out, files, internal=internal if CASES_FILE in published_names else frozenset())
    if config is not None:
        for index, published in enumerate(config.publish):
            if published.record != RESULTS_FILE and published.record not in files and not (root / published.record).is_file():
                out.at(config_doc, f"/publish/{index}/record", f'published record "{published.record}" does not exist', "record.dangling-file")
    results_path = root / RESULTS_FILE
    if results_path.exists():  # missing, it is only not written yet (`sitegen score`); there, it must be readable
        try:
            data = read_regular(results_path)
        except OSError as exc:
            out.unreadable(str(results_path), exc)
        else:
            files[RESULTS_FILE] = m.SourceFile(str(results_path), hashlib.sha256(data).hexdigest(), len(data))
            del data  # read again when needed: at scale it is the largest file, and most commands never look at it

    setups = read_setups(setups_doc, out) if setups_doc else None
    suites, case_versions, pairs = read_cases(cases_doc, out) if cases_doc else ((), None, ())
    runs = _runs(runs_doc, out, setups=setups or {}, suites=suites) if runs_doc else None
    answers = AnswerSpool(unpacking=unpacking)
    broken_answers: list[str] = []
    if config is not None:
        # every answers file is checked in itself and against whatever of the other records loaded; only the checks
        # that need a broken file's content wait (a note at that file says which)
        context = AnswersContext(root, None if runs is None else {r.id: r for r in runs},
                                  None if cases_doc is None else {(s.id, s.version): s for s in suites}, case_versions, setups)
        tasks = tuple(AnswersTask(name, internal if name in published_names else frozenset(), name in published_names)
                      for name in _readable_answers(config, root))
        if jobs > 1 and len(tasks) > 1:
            broken_answers = read_answers_apart(context, tasks, out, files, answers, jobs=jobs, cache=cache)
        else:
            broken_answers = read_answers_here(context, tasks, out, files, answers, cache)
        if not broken_answers and runs is not None and context.suites is not None:
            check_completeness(runs_doc, runs, answers, context.suites, out)
    _note_waiting(root, out, config=config_doc is not None, setups=setups_doc is not None, runs=runs_doc is not None,
                  cases=cases_doc is not None, answers=broken_answers, several=config is not None and len(config.answers) > 1)
    runs = runs or ()
    setups = setups or {}
    case_versions = case_versions or {}

    entries: tuple[m.Entry, ...] = ()
    if (root / CHANGELOG_DIR).is_dir():
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


def _note_waiting(root: Path, out: Collector, *, config: bool, setups: bool, runs: bool, cases: bool, answers: list[str],
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


def _config(doc: JsonText, root: Path, out: Collector) -> m.Config:
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
    names = Counter(p["name"].casefold() for p in v["publish"])  # one file where the file system ignores case
    for index, p in enumerate(v["publish"]):
        if names[p["name"].casefold()] > 1:
            out.at(doc, f"/publish/{index}/name", f'"{p["name"]}" is published twice (names are compared ignoring case, '
                   "as many file systems compare them)", "record.duplicate-id")
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
        license=MappingProxyType(dict(v["license"])) if "license" in v else None,
        sitegen_source=v.get("sitegen_source"),
    )


def _runs(doc: JsonText, out: Collector, *, setups: dict, suites: tuple[m.Suite, ...]) -> tuple[m.Run, ...]:
    items = doc.value["runs"]
    check_unique_ids(doc, items, "/runs", "run", out)
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
