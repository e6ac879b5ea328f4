"""`sitegen verify`: a list of checks over a publication read back, each a function returning a typed outcome, so a new
check (a signature, a chain of publications, sealed inputs) is one more line in CHECKS."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from sitegen import __version__
from sitegen.audit.pages import compare_pages, other_sitegen
from sitegen.audit.publication import Publication, read_publication
from sitegen.audit.rescore import run_differences
from sitegen.audit.source import TIMEOUT, locate, unreadable
from sitegen.core import model as m
from sitegen.core.collector import collector_paused
from sitegen.core.errors import Diagnostic, DiagnosticsError
from sitegen.core.fingerprint import sitegen_fingerprint
from sitegen.load.jsonread import parse_json
from sitegen.load.records import RESULTS_FILE
from sitegen.load.publications import ALLOWED_SIGNERS, LOG
from sitegen.load.publications import FOLDER as PUBLICATIONS
from sitegen.load.schema import schema_files
from sitegen.loading import load_phase, recorded_phase
from sitegen.publish.chain import check_log_chain, check_log_results, parse_log, result_digest, stored_name
from sitegen.publish.signing import SIGNATURE, check_signature
from sitegen.publish.site import DOWNLOADS, MARKER, SUMS
from sitegen.score.seals import check_seals
from sitegen.score.verify import PassRequest, score_pass

OK, FAIL, SKIP = "ok", "FAIL", "skip"


@dataclass(frozen=True)
class Loaded:
    """The downloads loaded as records, their published results, and every published run scored afresh."""

    records: m.Records
    recorded: Mapping[str, m.RunResult]
    fresh: Mapping[str, m.RunResult]
    comparisons: Mapping


@dataclass(frozen=True)
class Audit:
    """What every check reads: the publication as read, and the records it loads as (None, with the problems, if not)."""

    publication: Publication
    loaded: Loaded | None
    load_problems: tuple[Diagnostic, ...]
    jobs: int
    detail_runs: int | None = None  # the --detail-runs K the site was built with, for the rebuilt pages


@dataclass(frozen=True)
class Outcome:
    """A check's finding: a short account of what was checked, and every difference (none: it passed)."""

    detail: str
    problems: tuple[Diagnostic, ...] = ()


@dataclass(frozen=True)
class Check:
    name: str
    title: str
    run: Callable[[Audit], Outcome]
    needs: tuple[str, ...] = ()  # checks that must pass first (the others' results mean nothing without them)


@dataclass(frozen=True)
class CheckResult:
    name: str
    title: str
    status: str  # ok | FAIL | skip
    detail: str
    problems: tuple[Diagnostic, ...]

    def to_json(self) -> dict:
        return {"name": self.name, "title": self.title, "status": self.status.lower(), "detail": self.detail,
                "problems": [{"path": d.path, "line": d.line, "column": d.column, "pointer": d.pointer, "severity": d.severity,
                              "message": d.message, "code": d.code, "text": d.format()} for d in self.problems]}


@dataclass(frozen=True)
class VerifyReport:
    """Every check's result, in order; exit 0 when all passed, 1 when any found a difference."""

    given: str
    checks: tuple[CheckResult, ...]

    @property
    def passed(self) -> bool:
        return all(c.status == OK for c in self.checks)

    @property
    def exit_code(self) -> int:
        return 0 if self.passed else 1

    def summary(self) -> str:
        failed = [c for c in self.checks if c.status == FAIL]
        skipped = sum(1 for c in self.checks if c.status == SKIP)
        if not failed:
            return f"verified {self.given}: all {len(self.checks)} checks passed (sitegen {__version__})"
        differences = sum(len(c.problems) for c in failed)
        return (f"NOT verified {self.given}: {len(failed)} of {len(self.checks)} checks failed with {differences} "
                f"difference(s){f', {skipped} skipped' if skipped else ''} (sitegen {__version__})")

    def lines(self) -> tuple[str, ...]:
        out: list[str] = []
        for check in self.checks:
            out.append(f"{check.status:<4} {check.title}" + (f" ({check.detail})" if check.detail else ""))
            out.extend(f"     {d.format()}" for d in check.problems)
        out.append(self.summary())
        return tuple(out)

    def to_json(self) -> dict:
        # which sitegen checked: its version, and the fingerprint of its source that a downloads page names (core/fingerprint.py)
        return {"source": self.given, "passed": self.passed, "sitegen": __version__, "sitegen_fingerprint": sitegen_fingerprint(),
                "summary": self.summary(), "checks": [c.to_json() for c in self.checks]}


def check_sums(audit: Audit) -> Outcome:
    """Every file SHA256SUMS lists is there with that checksum, and (in a folder) every file is listed."""
    publication = audit.publication
    problems = []
    for entry in publication.sums:
        copied = publication.copied.get(entry.name)
        if copied is None:
            problems.append(Diagnostic(publication.where(entry.name), None, None, None,
                                       f"SHA256SUMS lists this file (line {entry.line}), but it is missing", "verify.missing"))
        elif copied.sha256 != entry.sha256:
            problems.append(Diagnostic(publication.where(entry.name), None, None, None,
                                       f"its SHA-256 is {copied.sha256}, but SHA256SUMS (line {entry.line}) lists {entry.sha256}",
                                       "verify.checksum"))
    for name in publication.unlisted or ():
        problems.append(Diagnostic(publication.where(name), None, None, None, "not listed in SHA256SUMS", "verify.unlisted"))
    detail = f"{len(publication.sums)} files"
    if publication.unlisted is None:
        detail += "; over HTTP only the files SHA256SUMS lists can be seen"
    return Outcome(detail, tuple(problems))


def check_schemas(audit: Audit) -> Outcome:
    """The published JSON Schemas are the ones this sitegen checks records against (each `$id` the URL it is served at,
    from the published configuration's base URL), so its checks are theirs."""
    publication = audit.publication
    problems = []
    shipped = schema_files(audit.loaded.records.config.base_url)
    for name, data in shipped:
        theirs = publication.read(name)
        if theirs is None:
            problems.append(Diagnostic(publication.where(name), None, None, None, "the JSON Schema is missing", "verify.missing"))
        elif theirs != data:
            problems.append(Diagnostic(publication.where(name), None, None, None, f"differs from the schema sitegen {__version__} "
                                       "checks these records against (verify with the sitegen that built the site)",
                                       "verify.schema-differs"))
    return Outcome(f"{len(shipped)} schemas", tuple(problems))


def check_signed(audit: Audit) -> Outcome:
    """When SHA256SUMS.sig is published, it is an OpenSSH signature of SHA256SUMS by a key the published allowed_signers allows."""
    publication = audit.publication
    signature = publication.read(SIGNATURE)
    if signature is None:
        return Outcome("not signed: the publication has no SHA256SUMS.sig")
    signers = publication.read(ALLOWED_SIGNERS)
    if signers is None:
        return Outcome("", (Diagnostic(publication.where(ALLOWED_SIGNERS), None, None, None, "SHA256SUMS is signed, but the "
                                       "allowed_signers line to check the signature with is missing", "verify.missing"),))
    problems = check_signature(publication.read(SUMS), signature, signers, sums_path=publication.where(SUMS),
                               signature_path=publication.where(SIGNATURE), signers_path=publication.where(ALLOWED_SIGNERS))
    return Outcome("signed; compare allowed_signers with the line the source repository pins", tuple(problems))


def check_chained(audit: Audit) -> Outcome:
    """When a publication log is published: every line follows the one before it and names a published SHA256SUMS, and
    every run a sealed publication contained is in the published results with the same entry."""
    publication = audit.publication
    log = publication.read(LOG)
    if log is None:
        return Outcome("no publication log: nothing was sealed")
    entries, _ = parse_log(log, path=publication.where(LOG))
    stored = {e.sha256sums: data for e in entries if (data := publication.read(f"{PUBLICATIONS}/{stored_name(e.sha256sums)}"))}
    problems = check_log_chain(log, stored, path=publication.where(LOG), folder=publication.where(PUBLICATIONS))
    current = {run_id: result_digest(result) for run_id, result in audit.loaded.recorded.items()}
    problems += check_log_results(log, current, path=publication.where(LOG), results_path=publication.where("results.json"))
    today = publication.copied[SUMS].sha256
    head = entries[-1] if entries else None
    state = (f"this publication is line {head.sequence}" if head is not None and head.sha256sums == today
             else "this publication is not sealed yet")
    return Outcome(f"{len(entries)} publications; {state}", tuple(problems))


def check_sealed(audit: Audit) -> Outcome:
    """Every sealed results entry's inputs (case versions, answers, run fields, setup) are the published ones, digest by digest."""
    loaded = audit.loaded
    sealed = sum(1 for r in loaded.recorded.values() if r.seal is not None)
    problems = audit.publication.relocate(check_seals(loaded.records, loaded.recorded))
    return Outcome(f"{sealed} of {len(loaded.recorded)} runs sealed", problems)


def check_records(audit: Audit) -> Outcome:
    """The downloads load as records: each JSON file valid against its schema, the files consistent with each other."""
    if audit.loaded is None:
        return Outcome("", audit.load_problems)
    records = audit.loaded.records
    return Outcome(f"{len(records.case_versions)} case versions, {len(records.published_runs)} published runs, "
                   f"{len(records.answers)} answers")


def check_rescored(audit: Audit) -> Outcome:
    """Every published run scored afresh from the published cases and answers gives its published results, count by count."""
    loaded = audit.loaded
    publication = audit.publication
    where = publication.shown.get(str(publication.records_dir / RESULTS_FILE), RESULTS_FILE)
    parsed: list = []

    def at(pointer: str, message: str, code: str) -> Diagnostic:
        if not parsed:  # placed by line and column only when there is something to place
            parsed.append(parse_json(where, (publication.records_dir / RESULTS_FILE).read_bytes())[0])
        if parsed[0] is not None:
            return parsed[0].diagnostic(pointer, message, code)
        return Diagnostic(where, None, None, pointer, message, code)

    problems: list[Diagnostic] = []
    index = {run_id: i for i, run_id in enumerate(loaded.recorded)}
    published = sorted(loaded.records.published_runs, key=lambda r: (r.date, r.id))
    observed = 0
    for run in published:
        if run.id not in index:
            problems.append(at("/runs", f"run {run.id} is published, but the published results do not hold it", "verify.missing-run"))
            continue
        fresh = loaded.fresh[run.id]
        observed += sum(x.observed for x in fresh.measures)
        problems.extend(run_differences(loaded.recorded[run.id], fresh, index=index[run.id], at=at))
    known = {r.id for r in published}
    for run_id, position in index.items():
        if run_id not in known:
            problems.append(at(f"/runs/{position}/run", f"the published results hold run {run_id}, which is not a published run",
                               "verify.unknown-run"))
    return Outcome(f"{len(published)} runs, {observed} observations re-derived", tuple(problems))


def check_pages(audit: Audit) -> Outcome:
    """The site rebuilt from the downloads alone is the published site, file by file and byte for byte."""
    loaded = audit.loaded
    publication = audit.publication

    def published_sha256(name: str) -> str | None:
        copied = publication.copied.get(name)
        return None if copied is None else copied.sha256

    # rendered as the build renders, with the collector running: a template leaves cycles behind at every page, and with
    # the collector paused the processes that render grew by them page after page (690 MiB each at 1,000 case versions)
    try:
        rebuilt = compare_pages(loaded.records, loaded.recorded, loaded.comparisons, publication.origin.site,
                                published_sha256=published_sha256, jobs=audit.jobs, records_dir=publication.records_dir,
                                signature=publication.read(SIGNATURE), detail_runs=audit.detail_runs)
    except DiagnosticsError as exc:
        return Outcome("the downloads do not build", publication.relocate(exc.diagnostics))
    detail = f"{rebuilt.files} files"
    problems = rebuilt.problems
    other = other_sitegen(publication.origin.site, loaded.records.config.default_language)
    if other is not None and problems:  # said first: it may explain every difference after it
        problems = (other, *problems)
    if publication.origin.site.names() is None:
        detail += "; over HTTP a file the rebuilt site does not have cannot be seen"
    return Outcome(detail, problems)


# The checks in the order they run; a check plugs in as one line here. A check of the signature, say, reads
# audit.publication.read("SHA256SUMS") and .read(SIGNATURE) (read when present, though SHA256SUMS cannot list it)
# and returns an Outcome whose problems name what does not hold; `needs` names the checks it relies on.
CHECKS = (
    Check("sums", "every file matches SHA256SUMS, and SHA256SUMS lists every file", check_sums),
    Check("signature", "SHA256SUMS is signed by a key allowed_signers allows, when it is signed", check_signed),
    Check("records", "the downloads load as records: every JSON file valid against its schema, the files agree", check_records),
    Check("schemas", "the published JSON Schemas are those sitegen checks records against", check_schemas,
          needs=("records",)),
    Check("seals", "every sealed run's inputs are the published ones", check_sealed, needs=("records",)),
    Check("chain", "the publication log's chain holds, and every run it sealed is published alike", check_chained,
          needs=("records",)),
    Check("results", "every published run, re-scored with the scorer version it names, gives its published results",
          check_rescored, needs=("records",)),
)
PAGES = Check("pages", "every page rebuilt from the downloads alone is the published page, byte for byte", check_pages,
              needs=("records",))


def verify_publication(given: str, *, pages: bool = False, jobs: int = 1, timeout: float = TIMEOUT,
                       checks: tuple[Check, ...] = CHECKS, detail_runs: int | None = None) -> VerifyReport:
    """Read the publication at `given` (a downloads or site folder, or an address) and run every check on it; with
    `pages`, the site is rebuilt as `sitegen build --detail-runs detail_runs` builds it.

    Raise UnreadableError (exit 2) when it cannot be read at all; every difference found is a check's result instead.
    """
    origin = locate(given, sums=SUMS, marker=MARKER, downloads=DOWNLOADS, timeout=timeout)
    if pages and origin.site is None:
        raise unreadable(given, f"--pages needs the site around the downloads folder, and its parent holds no {MARKER}: "
                         "name the downloads folder inside a site sitegen built, or the site's address", "verify.no-site")
    selected = checks + ((PAGES,) if pages else ())
    with tempfile.TemporaryDirectory(prefix="sitegen-verify-") as folder:
        publication = read_publication(origin, Path(folder))
        loaded, problems = _load(publication, jobs)
        audit = Audit(publication, loaded, problems, jobs, detail_runs)
        results = _run(selected, audit)
    return VerifyReport(given, results)


def _load(publication: Publication, jobs: int) -> tuple[Loaded | None, tuple[Diagnostic, ...]]:
    """The records the downloads make, with their published results and a fresh scoring of every published run."""
    try:
        records = load_phase(publication.records_dir, jobs=jobs)
        recorded = recorded_phase(records, publication.records_dir)
    except DiagnosticsError as exc:
        return None, publication.relocate(exc.diagnostics)
    with collector_paused():  # a run's observations are many small acyclic objects
        scored = score_pass(PassRequest(records, None, compare=True), records.published_runs, jobs=jobs, keep_all_changes=False)
    return Loaded(records, recorded, scored.results, scored.comparisons), ()


def _run(checks: tuple[Check, ...], audit: Audit) -> tuple[CheckResult, ...]:
    done: dict[str, str] = {}
    results = []
    for check in checks:
        waiting = [name for name in check.needs if done.get(name) != OK]
        if waiting:
            titles = ", ".join(c.title for c in checks if c.name in waiting)
            result = CheckResult(check.name, check.title, SKIP, f"needs: {titles}", ())
        else:
            outcome = check.run(audit)
            result = CheckResult(check.name, check.title, FAIL if outcome.problems else OK, outcome.detail, outcome.problems)
        done[check.name] = result.status
        results.append(result)
    return tuple(results)
