"""The build in named phases: read and check everything first, then render, then write and swap in one step."""

from __future__ import annotations

import datetime
import os
import time
from contextlib import closing, contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterator, Mapping

from sitegen.changelog.changes import Changelog, build_changelog
from sitegen.core import model as m
from sitegen.core.collector import collector_paused
from sitegen.core.errors import Diagnostic, PublicationError, UsageError
from sitegen.core.files import HeldFile
from sitegen.core.fingerprint import sitegen_fingerprint
from sitegen.core.workers import in_background
from sitegen.load.answercache import CheckedAnswers
from sitegen.load.publications import read_publications
from sitegen.load.schema import schema_files
from sitegen.load.spool import ResultSpool
from sitegen.loading import load_phase, recorded_phase
from sitegen.publish.downloads import CleanFiles, Download, collect_downloads, collect_metadata
from sitegen.publish.exportcache import CaseRowsKept
from sitegen.publish.exportcontext import ExportContext
from sitegen.publish.exports import check_export_names, export_files
from sitegen.publish.provenance import Provenance, check_provenance
from sitegen.publish.site import PageWriter, check_out_dir, is_site, sha256sums, staging, write_site
from sitegen.publish.siteindex import forget_index, held_files, read_index, write_index
from sitegen.publish.stamp import (Stamp, forget_stamp, input_digest, read_stamp, site_files, up_to_date, write_stamp,
                                   written_files)
from sitegen.publish.swap import removed_meanwhile
from sitegen.render.catalogs import load_catalogs
from sitegen.render.feed import FEED_PATH, feed_path, render_atom, render_changelog_json
from sitegen.render.pagecache import PageCache, folders_digest, page_config, page_key
from sitegen.render.pages import iter_pages
from sitegen.score.comparison import Comparison
from sitegen.score.compared import ComparedRuns
from sitegen.score.scoring import verdict_source
from sitegen.score.recordcache import RecordEntries
from sitegen.score.verified import VerifiedRuns
from sitegen.score.verify import Verified, verify_published
from sitegen import __version__

# sitegen's templates (with the static files and the prose) and catalogs ship inside its package: an installed one builds
PACKAGE = Path(__file__).resolve().parent
TEMPLATES = PACKAGE / "templates"
LOCALES = PACKAGE / "locales"
SOURCES = (PACKAGE,)  # what a page is made of besides the records: sitegen's code, templates (with the prose) and catalogs
WORDING = (TEMPLATES.name, LOCALES.name)  # what only pages read: left out of what loading, scoring and verifying key on

Progress = Callable[[str, str], None]


@dataclass(frozen=True)
class BuildSummary:
    out: Path
    pages: int
    downloads: int


@dataclass(frozen=True)
class Checked:
    """Everything the render phase needs, read and verified; nothing below this line touches the records folder."""

    records: m.Records
    results: Mapping[str, m.RunResult]
    downloads: tuple[Download, ...]
    changelog: Changelog
    catalogs: Mapping
    build_date: str
    comparisons: Mapping[str, Comparison]  # run id -> Comparison with the previous comparable run (regressions only)
    provenance: Provenance | None = None  # SHA256SUMS' signature and the publication log (None: not checked, nothing published)
    exports: tuple[tuple[str, m.InMemoryFile], ...] = ()  # the standard exports, made from the verified results
    reasons: Mapping[str, bytes] = field(default_factory=dict)  # run id -> its observations' structured reasons, packed


def build_date(records: m.Records, environ=os.environ) -> str:
    """The date the build stamps: SOURCE_DATE_EPOCH when set, else the newest published run's date (never the clock); never
    before the newest published run, since every footer says the data reach up to it."""
    newest = max((r.date for r in records.published_runs), default="1970-01-01")
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        try:
            return max(datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc).date().isoformat(), newest)
        except (ValueError, OverflowError, OSError):
            raise UsageError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, not {epoch!r}") from None
    return newest


def check_out(out: Path, *, records_dir: Path) -> Path:
    """The folder a site may replace (publish/site.check_out_dir), checked before anything is read or written."""
    return check_out_dir(Path(out), records_dir=Path(records_dir))


def check_cache(cache: Path, *, out: Path, records_dir: Path) -> None:
    """A cache inside the site would be swapped away with it, one inside the records would change them: both refused."""
    where = cache.resolve()
    for name, folder in (("the site folder", out.resolve()), ("the records folder", records_dir.resolve())):
        if where == folder or folder in where.parents or where in folder.parents:
            raise UsageError(f"--cache {cache}: the cache must lie outside {name} {folder} and not hold it")


def check_sources() -> None:
    """sitegen reads its templates and catalogs from its own package: without them nothing can be built."""
    for folder in (TEMPLATES, LOCALES):
        if not folder.is_dir():
            raise UsageError(f"{folder} is missing: sitegen's package is incomplete; install it again from its source "
                             "(`pip install .`, or `pip install -e .` in a checkout)")


def verify_phase(records: m.Records, recorded: ResultSpool, *, jobs: int = 1, cache: VerifiedRuns | None = None,
                 compared: ComparedRuns | None = None) -> Verified:
    """Re-score every published run once (with `cache`, only those not verified before with the same inputs), check it
    reproduces the record, and compare it with the previous comparable one; the comparisons and each run's structured
    reasons (packed) go on to the pages."""
    with collector_paused():  # a run's observations and summary are hundreds of thousands of small acyclic objects
        return verify_published(records, recorded, jobs=jobs, cache=cache, comparisons=compared)


@dataclass(frozen=True)
class CheckedBefore:
    """What a cache found to be sitegen's keeps of the checks: answers files checked, runs verified, records files found
    fit to publish, the results record's entries read, runs compared and runs' case-table rows written, keyed with
    sitegen's own code (digested once per build)."""

    answers: CheckedAnswers
    verified: VerifiedRuns
    published: CleanFiles | None = None
    results: RecordEntries | None = None
    compared: ComparedRuns | None = None
    case_rows: CaseRowsKept | None = None


def checked_cache(cache: PageCache) -> CheckedBefore:
    """The answers files checked and the runs verified before, kept in the folder of a cache found to be sitegen's."""
    source = folders_digest(PACKAGE, skip=WORDING)
    return CheckedBefore(CheckedAnswers(cache.root / "answers", source), VerifiedRuns(cache.root / "verified", source),
                         CleanFiles(cache.root / "published", source), RecordEntries(cache.root / "results", source),
                         ComparedRuns(cache.root / "compared", source), CaseRowsKept(cache.root / "case-rows", source))


def changelog_phase(records: m.Records) -> Changelog:
    """Every change to the tests, each version change explained by an entry (or a located problem)."""
    return build_changelog(records)


def catalogs_phase(records: m.Records) -> Mapping:
    """The translation catalogs of every language, checked complete and compiled in memory."""
    return load_catalogs(LOCALES, records.config.languages)


def downloads_phase(records: m.Records, clean: CleanFiles | None = None) -> tuple[Download, ...]:
    """The files to publish, and the public run metadata a reader re-scores them with, checked to hold no internal field
    and no unpublished run (with `clean`, a records file found fit before is not checked again), nor to take an export's
    name; every check's problems come in one run."""
    problems: list[Diagnostic] = []
    downloads: list[Download] = []
    for check in (lambda records: collect_downloads(records, clean), collect_metadata, check_export_names):
        try:
            downloads.extend(check(records) or ())
        except PublicationError as exc:
            problems.extend(exc.diagnostics)
    if problems:
        raise PublicationError(problems)
    return tuple(downloads)


def published_files(records: m.Records, downloads: tuple[Download, ...], exports: tuple[tuple[str, m.InMemoryFile], ...] = ()
                    ) -> tuple[tuple[str, object], ...]:
    """Every file under downloads/ that SHA256SUMS lists: the published records, the JSON Schemas (each `$id` the URL
    it is served at) and the exports."""
    schemas = schema_files(records.config.base_url)
    return (tuple((d.name, d.source) for d in downloads) + tuple((n, m.InMemoryFile(b)) for n, b in schemas)
            + tuple(exports))


def exports_phase(records: m.Records, recorded: Mapping[str, m.RunResult], catalogs: Mapping,
                  downloads: tuple[Download, ...], kept: CaseRowsKept | None = None) -> tuple[tuple[str, m.InMemoryFile], ...]:
    """The standard exports (CSV, Every Eval Ever, Croissant), made from the results just verified: nothing is scored again
    (with `kept`, a run's rows of the case table written before are not written again)."""
    records_files = tuple((d.name, d.source) for d in downloads)
    return export_files(ExportContext.of(records, recorded, catalogs, records_files), kept)


def provenance_phase(records_dir: Path, recorded: Mapping[str, m.RunResult], published: tuple[tuple[str, object], ...], *,
                     signing_key: Path | None = None) -> Provenance:
    """The publication log checked (its chain, and every run it sealed still recorded alike), and SHA256SUMS (of every
    published file, the exports included) signed when a key is given (one the records' allowed_signers line allows)."""
    publications = read_publications(Path(records_dir))
    return check_provenance(publications, sha256sums(published), recorded, signing_key=signing_key,
                            results_path=str(Path(records_dir) / "results.json"))


def check_records(records_dir: Path, *, progress: Progress | None = None, jobs: int = 1,
                  signing_key: Path | None = None, before: CheckedBefore | None = None) -> Checked:
    """Load, validate, verify results (with `before`, only the answers files not checked and the runs not verified
    before), check publication rules, build the changelog and the catalogs; raise on any problem."""
    say = progress or (lambda phase, detail="": None)
    check_sources()
    say("load", str(records_dir))
    records = load_phase(Path(records_dir), jobs=jobs, cache=before.answers if before else None)
    say("validate", f"{len(records.case_versions)} case versions, {len(records.runs)} runs, {len(records.answers)} answers")
    recorded = recorded_phase(records, Path(records_dir), before.results if before else None)
    say("verify", f"re-scoring {len(records.published_runs)} published runs and comparing each with the previous one")
    verifying = _Verifying(records, recorded, jobs, before.verified if before else None, before.compared if before else None)
    with _begun(verifying, jobs) as verified_now:
        try:
            downloads = downloads_phase(records, before.published if before else None)
            changelog = changelog_phase(records)
            hand_written = sum(1 for row in changelog.rows if row.kind == "entry")
            say("changelog", f"{len(changelog.rows)} changes, {hand_written} of them hand-written")
            catalogs = catalogs_phase(records)
            exports = exports_phase(records, recorded, catalogs, downloads, before.case_rows if before else None)
            provenance = provenance_phase(Path(records_dir), recorded, published_files(records, downloads, exports),
                                          signing_key=signing_key)
        except Exception:
            verified_now()  # verifying's problems come first, as when it ran before the rest
            raise
        verified = verified_now()
    return Checked(records, recorded, downloads, changelog, catalogs, build_date(records), verified.comparisons, provenance,
                   exports, verified.reasons)


@dataclass(frozen=True)
class _Verifying:
    """What verify_phase is called with, so that it can run in a process of its own."""

    records: m.Records
    recorded: ResultSpool
    jobs: int
    cache: VerifiedRuns | None
    compared: ComparedRuns | None

    def __call__(self) -> Verified:
        return verify_phase(self.records, self.recorded, jobs=self.jobs, cache=self.cache, compared=self.compared)


@contextmanager
def _begun(verifying: _Verifying, jobs: int) -> Iterator[Callable[[], Verified]]:
    """Verifying begun: with jobs > 1 in a forked process of its own, so the publication checks, the changelog and the
    exports (which need only the results record) are made meanwhile, and a run added is scored on the other core; with
    one job, in this process before the rest, as one process does everything in turn."""
    if jobs <= 1:
        verified = verifying()
        yield lambda: verified
        return
    with in_background(_verify_in_background, None, context=verifying) as result:
        yield result


def _verify_in_background(verifying: _Verifying, _task) -> Verified:
    return verifying()


def render_salt(checked: Checked, *, detail_runs: int | None = None) -> bytes:
    """What every cached page is made of besides its own inputs: sitegen, templates, catalogs, configuration, languages, date,
    how many runs keep their case pages."""
    config = checked.records.config
    return bytes.fromhex(page_key(folders_digest(*SOURCES), __version__, page_config(config), tuple(config.languages), checked.build_date,
                                  detail_runs))


def render_site(checked: Checked, *, jobs: int = 1, progress: Progress | None = None, write=None, cache: PageCache | None = None,
                detail_runs: int | None = None, held: Mapping[str, HeldFile] | None = None):
    """All pages (a generator: a large site is never held in memory at once) and the extra files; same input, same bytes.

    `write` (a site.PageWriter on the staging folder) lets the processes that render most pages write them too; `held`
    (publish/siteindex.py) names the previous site's pages as the last build with `cache` left them.
    """
    say = progress or (lambda phase, detail="": None)
    records = checked.records
    published = published_files(records, checked.downloads, checked.exports)
    say("render", f"{len(records.config.languages)} languages")
    pages = iter_pages(records, checked.results, verdicts=verdict_source(records), changelog=checked.changelog,
                       catalogs=checked.catalogs, build_date=checked.build_date, downloads=published, templates=TEMPLATES,
                       jobs=jobs, comparisons=checked.comparisons, write=write, provenance=checked.provenance,
                       exports=tuple(name for name, _ in checked.exports), reasons=checked.reasons, cache=cache,
                       detail_runs=detail_runs, salt=render_salt(checked, detail_runs=detail_runs) if cache is not None else b"",
                       held=held or {}, source_fingerprint=sitegen_fingerprint())
    title = records.config.title.get("en") or next(iter(records.config.title.values()))
    url, updated = records.config.base_url, checked.build_date
    extra = (
        (FEED_PATH, render_atom(checked.changelog, base_url=url, title=title, updated=updated, path=FEED_PATH)),
        *((feed_path(lang), render_atom(checked.changelog, base_url=url, title=records.config.title.get(lang, title), updated=updated,
                                        lang=lang, gettext=checked.catalogs[lang].gettext))
          for lang in records.config.languages),
        ("changelog.json", render_changelog_json(checked.changelog)),
    ) + (checked.provenance.files() if checked.provenance is not None else ())
    return pages, published, extra


def build_site(records_dir: Path, out: Path, *, jobs: int = 1, progress: Progress | None = None,
               signing_key: Path | None = None, cache: Path | None = None, detail_runs: int | None = None) -> BuildSummary:
    """Check everything, render everything, then replace `out` in one swap; a failure leaves `out` untouched.

    First of all `out` is checked (site.check_out_dir): a folder that is not a site sitegen built, the records, the
    working folder, or a file are refused with an OutFolderError before a record is read or anything is written.
    With `cache` (a folder outside the site), a build whose every input is unchanged and whose site is untouched
    stops before reading the records (publish/stamp.py), and case and case-run pages whose inputs are unchanged are
    taken from the cache instead of rendered (render/pagecache.py); the site is the same, byte for byte. After the
    swap, what the build did not use is deleted from the cache (PageCache.prune), so it holds one build's worth.
    With `detail_runs` K only the newest K runs of each case version get their page per case (see README, "Growth").
    """
    started_ns = time.time_ns()  # a cache entry neither read nor written since is one this build did not use
    target = check_out(Path(out), records_dir=Path(records_dir))
    if cache is not None:
        check_cache(Path(cache), out=target, records_dir=Path(records_dir))
    pages_cache = PageCache.open(Path(cache)) if cache is not None else None
    inputs = None
    if pages_cache is not None and pages_cache.usable:
        check_sources()
        inputs = input_digest(Path(records_dir), SOURCES, version=f"{__version__} detail-runs={detail_runs}")
        stamp = read_stamp(pages_cache) if signing_key is None else None  # a signature is asked for afresh every time
        if up_to_date(stamp, inputs, target):
            if progress:
                progress("up to date", f"nothing changed since the site in {out} was built")
            return BuildSummary(Path(out), stamp.pages, stamp.downloads)
    elif pages_cache is not None and progress:
        progress("cache", f"{cache} is not a sitegen cache (no {pages_cache.root.name}/CACHEDIR.TAG of sitegen's): not used")
    checked = check_records(Path(records_dir), progress=progress, jobs=jobs, signing_key=signing_key,
                            before=checked_cache(pages_cache) if inputs is not None else None)
    with staging(target, jobs=jobs) as folder:
        previous = target if is_site(target) else None  # its unchanged files are linked, not written again
        held = read_index(pages_cache, target) if inputs is not None and previous is not None else {}
        pages, published, extra = render_site(checked, jobs=jobs, progress=progress, write=PageWriter(folder, previous),
                                              cache=pages_cache if inputs is not None else None, detail_runs=detail_runs,
                                              held=held)
        if progress:
            progress("write", f"{len(published)} downloads and the pages into {out}")
        if inputs is not None:
            forget_stamp(pages_cache)  # the site they describe is about to be replaced
            forget_index(pages_cache)
        with closing(pages):  # on a failure, its workers are stopped before the staged folder they write in is removed
            manifest = write_site(_counting(pages, progress), target, published=published, extra_files=extra, staged=folder)
        summary = BuildSummary(Path(out), sum(1 for f in manifest.files if f.path.endswith(".html")), len(published))
        if inputs is not None:
            with removed_meanwhile(folder, jobs=jobs):  # the old site, swapped into `folder`, goes meanwhile
                if signing_key is None:  # a signed site is never said to be up to date: see above
                    # the index and the stamp from what the writers said of each file: the new site is not listed again
                    write_index(pages_cache, target, held_files(manifest.files, taken_ns=time.time_ns()))
                    files = written_files(manifest.files)
                    write_stamp(pages_cache, Stamp(inputs, str(target), site_files(target) if files is None else files,
                                                   summary.pages, summary.downloads))
            # after the old site is gone: both at once wait on each other for the file system, several times longer
            gone = pages_cache.prune({f.key for f in manifest.files if f.key}, used_since_ns=started_ns)
            if gone and progress:
                progress("cache", f"{gone} entries this build did not use deleted from {cache}")
    return summary


def _counting(pages, progress: Progress | None, every: int = 5000):
    """Pass pages through, saying every so often how many were rendered (long builds only)."""
    for count, page in enumerate(pages, 1):
        if progress and count % every == 0:
            progress("render", f"{count} pages")
        yield page
