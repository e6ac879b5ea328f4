"""The answers files, read one answer at a time (in forked workers when asked), checked against the other records and packed."""

from __future__ import annotations

import hashlib
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from sitegen.core import model as m
from sitegen.core.files import read_regular
from sitegen.core.errors import Diagnostic
from sitegen.core.errors import did_you_mean as _hint
from sitegen.core.workers import ordered_map
from sitegen.load.answercache import CheckedAnswers
from sitegen.load.answerpack import PackedRun, RawAnswer, pack_answers
from sitegen.load.jsonread import JsonText, NotStreamable, read_json_text
from sitegen.load.reading import Collector, read_file
from sitegen.load.repeats import Repeat, Repeats
from sitegen.load.schema import checked_items, repeats_of
from sitegen.load.spool import AnswerSpool

_KINDS = {m.FLAW: m.FLAW, m.STRENGTH: m.STRENGTH}
_LEADING = ("run", "case_version", "repetition")  # the members that say which answer a line is; the rest repeats


class _Shared(dict):
    """One copy of each repeated value (`setdefault(value, value)`): the same quote, wording or span recurs in every
    repetition and run."""


def _finding(raw: dict, trace: bool, shared: _Shared) -> tuple:
    """A finding in the spool's packed form (m.Finding's fields in order): it is packed next, so no Finding is built here."""
    location = raw["location"]
    intern = sys.intern  # ids and rule names repeat across hundreds of thousands of answers
    one = shared.setdefault  # shared.one without a Python call per value: this runs for every finding of every answer
    quote = raw["quote"]
    supporting, wording = raw["supporting_rules"], raw["wording"]
    if supporting:
        supporting = tuple(map(intern, supporting))
        supporting = one(supporting, supporting)
    span = None
    if location:
        span = tuple(location["lines"])
        span = one(span, span)
    traced = ()
    if trace and raw["trace"]:
        traced = tuple(map(intern, raw["trace"]))
        traced = one(traced, traced)
    return (
        intern(raw["id"]), _KINDS[raw["kind"]], intern(raw["rule"]), supporting or (),
        raw["missing"], one(quote, quote) if quote is not None else None, span, one(wording, wording), traced,
    )


def _engine_answer(doc: JsonText, pointer: str, raw: dict, out: Collector, *, merge: bool | None, shared: _Shared) -> tuple:
    """An engine answer checked, in the spool's packed form (see spool.RawAnswer)."""
    # pointers are spelled out only when something is wrong: this runs for every answer of every run
    ids: dict[str, str] = {}
    reviewers = []
    reviewer_ids: set[str] = set()
    for r_index, reviewer in enumerate(raw["reviewers"]):
        if reviewer["id"] in reviewer_ids:
            out.at(doc, f"{pointer}/reviewers/{r_index}/id", f'duplicate reviewer id "{reviewer["id"]}"', "record.duplicate-id")
        reviewer_ids.add(reviewer["id"])
        label = f"reviewer {reviewer['id']}"  # once per reviewer, not per finding: it is named only when an id recurs
        findings = []
        for f_index, f in enumerate(reviewer["findings"]):
            fid = f["id"]
            if fid in ids:
                out.at(doc, f"{pointer}/reviewers/{r_index}/findings/{f_index}/id",
                       f'duplicate finding id "{fid}" (first at {ids[fid]})', "record.duplicate-id")
            else:
                ids[fid] = label
            location = f["location"]
            if location and location["lines"][0] > location["lines"][1]:
                out.at(doc, f"{pointer}/reviewers/{r_index}/findings/{f_index}/location/lines",
                       "a location's first line comes after its last line", "record.line-span")
            findings.append(_finding(f, False, shared))
        reviewers.append((sys.intern(reviewer["id"]), tuple(findings)))
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
    corrections = tuple([(c["finding"], c["before"], c["after"]) for c in raw["quote_corrections"]]) if raw["quote_corrections"] else ()
    return (raw["status"], tuple(reviewers), corrections, report)


@dataclass(frozen=True)
class AnswersContext:
    """What checking an answers file needs from the records read before it; forked workers inherit it."""

    root: Path
    runs: dict[str, m.Run] | None  # None: that records file did not load, so the checks against it wait
    suites: dict[tuple[str, int], m.Suite] | None
    case_versions: dict[str, m.CaseVersion] | None
    setups: dict[str, m.Setup] | None


@dataclass(frozen=True)
class AnswersTask:
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


def _read_one(context: AnswersContext, task: AnswersTask, out: Collector, files: dict[str, m.SourceFile], earlier: AnswerSpool,
              shared: _Shared) -> dict[tuple[str, str, int], RawAnswer] | None:
    """One answers file, read the same way here and in a worker."""
    return _read_answers(context.root, task.name, out, files, earlier, internal=task.internal, runs=context.runs,
                         suites=context.suites, case_versions=context.case_versions, setups=context.setups,
                         published=task.published, shared=shared)


def read_answers_here(context: AnswersContext, tasks: tuple[AnswersTask, ...], out: Collector, files: dict[str, m.SourceFile],
                       answers: AnswerSpool, cache: CheckedAnswers | None = None) -> list[str]:
    """Every answers file in this process (with `cache`, those checked before as they were kept); the names of those
    that could not be read."""
    broken = []
    shared = _Shared()
    for task in tasks:
        hit = _cached(context, task, cache, answers)
        if hit is not None:
            _take(hit, task.name, out, files, answers)
            continue
        # one answers file at a time, one answer at a time: only this file's answers are alive, then they are packed
        before = len(out.diagnostics)
        read = _read_one(context, task, out, files, answers, shared)
        if read is None:
            broken.append(task.name)
            continue
        packed = pack_answers(read.values())
        del read
        answers.add_packed(packed)
        if len(out.diagnostics) == before:
            _keep(context, task, cache, files.get(task.name), packed)
    return broken


def read_answers_apart(context: AnswersContext, tasks: tuple[AnswersTask, ...], out: Collector, files: dict[str, m.SourceFile],
                        answers: AnswerSpool, *, jobs: int, cache: CheckedAnswers | None = None) -> list[str]:
    """Every answers file in forked workers (with `cache`, only those not checked before), taken in file order; the names
    of those that could not be read.

    A worker checks its file against the records but not against the other answers files. Should one of its answers
    already stand in an earlier file, the file is read again here, against those, so the problems are as with one process.
    """
    hits = {task.name: _cached(context, task, cache, None) for task in tasks} if cache is not None else {}
    fresh = ordered_map(_read_in_worker, [t for t in tasks if hits.get(t.name) is None], jobs=jobs, context=context)
    broken = []
    for task in tasks:
        read = hits.get(task.name)
        kept = read is not None
        if read is None:
            read = next(fresh)
        if read.packed is not None and _any_earlier(read.packed, answers):
            read, kept = _read_packed(context, task, answers), False
        if not _take(read, task.name, out, files, answers):
            broken.append(task.name)
        elif not kept and not read.diagnostics:
            _keep(context, task, cache, read.source, read.packed)
    return broken


def _cached(context: AnswersContext, task: AnswersTask, cache: CheckedAnswers | None, earlier: AnswerSpool | None) -> _AnswersRead | None:
    """An answers file as it was kept when checked before, if its bytes, the facts its checks read and (unless `earlier`
    is None) the answers read so far let it stand as read afresh; otherwise None, and the file is read afresh."""
    if not _cacheable(context, cache):
        return None
    path = context.root / task.name
    try:
        data = read_regular(path)
    except OSError:
        return None
    source = m.SourceFile(str(path), hashlib.sha256(data).hexdigest(), len(data))
    del data
    kept = cache.get(cache.key(task.name, source.sha256, task.published, task.internal), task.name)
    if kept is None or kept[0] != context_facts(context, kept[1]) or (earlier is not None and _any_earlier(kept[1], earlier)):
        return None
    return _AnswersRead(source, (), kept[1])


def _keep(context: AnswersContext, task: AnswersTask, cache: CheckedAnswers | None, source: m.SourceFile | None,
          packed: tuple[PackedRun, ...]) -> None:
    """Keep an answers file found clean, with the facts it was checked against."""
    if source is None or not _cacheable(context, cache):
        return
    cache.put(cache.key(task.name, source.sha256, task.published, task.internal), context_facts(context, packed), packed)


def _cacheable(context: AnswersContext, cache: CheckedAnswers | None) -> bool:
    """Whether answers files can be taken from or kept in `cache`: there is one, and every record the checks read loaded."""
    return cache is not None and None not in (context.runs, context.suites, context.case_versions, context.setups)


def context_facts(context: AnswersContext, packed: tuple[PackedRun, ...]) -> tuple:
    """What checking a file's answers against the other records reads of those records (_answers, _engine_answer's
    merge): per run, whether it exists, the fields the checks use and its setup's merge; which of its case versions the
    cases record lacks and which its suite lacks. Equal bytes and equal facts give equal problems."""
    facts = []
    for part in packed:
        run = context.runs.get(part.run)
        cvs = {cv for cv, _, _ in part.keys}
        unknown = tuple(sorted(cvs.difference(context.case_versions)))
        if run is None:
            facts.append((part.run, None, unknown, None))
            continue
        suite = context.suites.get((run.suite, run.suite_version))
        setup = context.setups.get(run.setup)
        facts.append((part.run, (run.published, run.suite, run.suite_version, run.repetitions, run.status, run.setup,
                                 None if setup is None else setup.merge),
                      unknown, None if suite is None else tuple(sorted(cvs.difference(suite.case_versions)))))
    return tuple(facts)


def _read_packed(context: AnswersContext, task: AnswersTask, earlier: AnswerSpool) -> _AnswersRead:
    """One answers file read, checked against the records and the `earlier` answers, and packed."""
    out, files = Collector(), {}
    read = _read_one(context, task, out, files, earlier, _Shared())
    return _AnswersRead(files.get(task.name), tuple(out.diagnostics), None if read is None else pack_answers(read.values()))


def _take(read: _AnswersRead, name: str, out: Collector, files: dict[str, m.SourceFile], answers: AnswerSpool) -> bool:
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


def _read_in_worker(context: AnswersContext, task: AnswersTask) -> _AnswersRead:
    """One answers file read, checked and packed in a worker, against no other answers file."""
    return _read_packed(context, task, AnswerSpool())


def _read_answers(root: Path, name: str, out: Collector, files: dict[str, m.SourceFile], earlier: AnswerSpool, *,
                  internal: frozenset[str], **context) -> dict[tuple[str, str, int], RawAnswer] | None:
    """One answers file read answer by answer (never its whole tree at once); None when it cannot be read or fails its schema.

    Anything unusual (bad JSON, a schema problem) sends the file through read_file instead, which parses it whole and
    reports exactly what is wrong, as for every other records file.
    """
    path = root / name
    try:
        data = read_regular(path)
    except OSError:
        data = None
    if data is not None:
        doc, problems = read_json_text(str(path), data)
        if not problems:
            files[name] = m.SourceFile(str(path), hashlib.sha256(data).hexdigest(), len(data))
            del data
            found = Collector()
            try:
                repeats = repeats_of("answers", "answers", _LEADING)
                read = _answers(doc, checked_items(doc, "answers", "answers", repeats), name, found, earlier, repeats=repeats, **context)
            except NotStreamable:
                pass
            else:
                out.diagnostics.extend(found.diagnostics)
                return read
    doc = read_file(root, name, "answers", out, files, internal=internal)
    return None if doc is None else _answers(doc, enumerate(doc.value["answers"]), name, out, earlier, **context)


def _answers(doc: JsonText, items, name: str, out: Collector, earlier: AnswerSpool, *, runs: dict, suites: dict, case_versions: dict,
             setups: dict, published: bool, shared: _Shared, repeats: Repeats | None = None) -> dict[tuple[str, str, int], RawAnswer]:
    """The answers of one file, checked against the records and against the answers of the files read before it.

    Each is kept in the spool's packed form, which it goes into next: its objects are built when a run is unpacked.
    With `repeats`, a later answer repeating a sound one's text but for its _LEADING members takes what that one made.
    """
    answers: dict[tuple[str, str, int], RawAnswer] = {}
    members = {key: frozenset(suite.case_versions) for key, suite in (suites or {}).items()}  # a suite holds up to thousands
    leaked: dict[str, list] = {}  # unpublished run -> [pointer of its first answer here, how many answers]
    for index, a in items:
        kept = None
        if type(a) is Repeat:
            a, kept = a  # its run, case version and repetition; (merge, status, answer, rerun) of the answer it repeats
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
        status = a["status"] if kept is None else kept[1]
        if run is not None and run.status == m.COMPLETED and status != m.COMPLETED:
            out.at(doc, f"{pointer}/status", f"run {run.id} completed, so its answers must be completed; mark the run crashed instead",
                   "record.crashed-answer")
        if kept is not None:
            if kept[0] is not merge:
                raise NotStreamable()  # checked under another setup's merge: the whole-file reading checks it afresh
            answer, rerun = kept[2], kept[3]
        else:
            before = len(out.diagnostics)
            answer = _engine_answer(doc, pointer, a, out, merge=merge, shared=shared)
            rerun = None if a["rerun"] is None else _engine_answer(doc, f"{pointer}/rerun", a["rerun"], out, merge=merge, shared=shared)
            if repeats is not None and len(out.diagnostics) == before:
                repeats.keep((merge, status, answer, rerun))
        answers[key] = RawAnswer(a["run"], a["case_version"], a["repetition"], answer, rerun, name)
    for run_id, (first, count) in leaked.items():  # once per run: a leaked run has as many answers as cases times repetitions
        more = f" (and {count - 1} more of its answers in this file)" if count > 1 else ""
        out.at(doc, first, f'answer of unpublished run "{run_id}" in a published file{more}', "publish.unpublished-run")
    return answers


def check_completeness(doc: JsonText, runs: tuple[m.Run, ...], answers: AnswerSpool, suites: dict, out: Collector) -> None:
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
