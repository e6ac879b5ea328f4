"""The build in named phases: read and check everything first, then render, then write and swap in one step."""

from __future__ import annotations

import datetime
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Mapping

from sitegen.changelog.changes import Changelog, build_changelog
from sitegen.core import model as m
from sitegen.core.collector import collector_paused, frozen_when_made
from sitegen.core.errors import Diagnostic, PublicationError, RecordsError, UsageError
from sitegen.load.records import load_records
from sitegen.load.schema import schema_files
from sitegen.load.spool import ResultSpool
from sitegen.publish.downloads import Download, collect_downloads, collect_metadata
from sitegen.publish.site import PageWriter, check_out_dir, staging, write_site
from sitegen.render.catalogs import load_catalogs
from sitegen.render.feed import render_atom, render_changelog_json
from sitegen.render.pages import iter_pages
from sitegen.score.comparison import Comparison
from sitegen.score.scoring import verdict_source
from sitegen.score.results import read_results
from sitegen.score.verify import verify_published

# Where sitegen reads its templates (with the static files and the prose) and its catalogs: its source folder.
TEMPLATES = Path(__file__).resolve().parent.parent / "templates"
LOCALES = Path(__file__).resolve().parent.parent / "locales"

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


def build_date(records: m.Records, environ=os.environ) -> str:
    """The date the build stamps: SOURCE_DATE_EPOCH when set, else the newest published run's date (never the clock)."""
    epoch = environ.get("SOURCE_DATE_EPOCH")
    if epoch is not None:
        try:
            return datetime.datetime.fromtimestamp(int(epoch), tz=datetime.timezone.utc).date().isoformat()
        except (ValueError, OverflowError, OSError):
            raise UsageError(f"SOURCE_DATE_EPOCH must be a whole number of seconds, not {epoch!r}") from None
    dates = sorted(r.date for r in records.published_runs)
    return dates[-1] if dates else "1970-01-01"


def check_out(out: Path, *, records_dir: Path) -> Path:
    """The folder a site may replace (publish/site.check_out_dir), checked before anything is read or written."""
    return check_out_dir(Path(out), records_dir=Path(records_dir))


def check_sources() -> None:
    """sitegen reads its templates and catalogs from its source folder: without them nothing can be built."""
    for folder in (TEMPLATES, LOCALES):
        if not folder.is_dir():
            raise UsageError(f"{folder} is missing: sitegen reads its templates and catalogs from its source folder, "
                             "so install it from a checkout with `pip install -e .`")


def load_phase(records_dir: Path, *, jobs: int = 1) -> m.Records:
    """Load and validate the records; when they do not load, the results record's own problems come in the same run.

    The loaded records live as long as the process: made with the collector paused, then frozen out of its sight,
    and so is every run unpacked later (the pages read them many times).
    """
    try:
        with frozen_when_made():
            return load_records(Path(records_dir), jobs=jobs, unpacking=frozen_when_made)
    except RecordsError as exc:
        raise RecordsError(exc.diagnostics + _results_problems(Path(records_dir))) from None


def recorded_phase(records: m.Records, records_dir: Path) -> ResultSpool:
    """The results record, read and schema-checked (a missing one is a problem: `sitegen score --all` writes it)."""
    if "results.json" not in records.files:
        raise PublicationError([Diagnostic(str(Path(records_dir) / "results.json"), None, None, None,
                                           "no results record; run `sitegen score --all` first", "results.missing")])
    with collector_paused():
        return read_results(records.results_json, path=str(Path(records_dir) / "results.json"), unpacking=frozen_when_made)


def verify_phase(records: m.Records, recorded: ResultSpool, *, jobs: int = 1) -> Mapping[str, Comparison]:
    """Re-score every published run once, check it reproduces the record, and compare it with the previous comparable one."""
    with collector_paused():  # a run's observations and summary are hundreds of thousands of small acyclic objects
        return verify_published(records, recorded, jobs=jobs).comparisons


def changelog_phase(records: m.Records) -> Changelog:
    """Every change to the tests, each version change explained by an entry (or a located problem)."""
    return build_changelog(records)


def catalogs_phase(records: m.Records) -> Mapping:
    """The translation catalogs of every language, checked complete and compiled in memory."""
    return load_catalogs(LOCALES, records.config.languages)


def downloads_phase(records: m.Records) -> tuple[Download, ...]:
    """The files to publish, and the public run metadata a reader re-scores them with, checked to hold no internal field and
    no unpublished run."""
    return collect_downloads(records) + collect_metadata(records)


def check_records(records_dir: Path, *, progress: Progress | None = None, jobs: int = 1) -> Checked:
    """Load, validate, verify results, check publication rules, build the changelog and the catalogs; raise on any problem."""
    say = progress or (lambda phase, detail="": None)
    check_sources()
    say("load", str(records_dir))
    records = load_phase(Path(records_dir), jobs=jobs)
    say("validate", f"{len(records.case_versions)} case versions, {len(records.runs)} runs, {len(records.answers)} answers")
    recorded = recorded_phase(records, Path(records_dir))
    say("verify", f"re-scoring {len(records.published_runs)} published runs and comparing each with the previous one")
    comparisons = verify_phase(records, recorded, jobs=jobs)
    downloads = downloads_phase(records)
    changelog = changelog_phase(records)
    hand_written = sum(1 for row in changelog.rows if row.kind == "entry")
    say("changelog", f"{len(changelog.rows)} changes, {hand_written} of them hand-written")
    catalogs = catalogs_phase(records)
    return Checked(records, recorded, downloads, changelog, catalogs, build_date(records), comparisons)


def _results_problems(records_dir: Path) -> tuple[Diagnostic, ...]:
    """What is wrong with the results record in itself (JSON, schema), so that records that do not load are no reason to
    leave it for another run; verifying it against a fresh scoring waits until they load."""
    try:
        data = (records_dir / "results.json").read_bytes()
    except OSError:
        return ()
    try:
        with collector_paused():
            read_results(data, path=str(records_dir / "results.json"))
    except RecordsError as exc:
        return exc.diagnostics
    return ()


def render_site(checked: Checked, *, jobs: int = 1, progress: Progress | None = None, write=None):
    """All pages (a generator: a large site is never held in memory at once) and the extra files; same input, same bytes.

    `write` (a site.PageWriter on the staging folder) lets the processes that render most pages write them too.
    """
    say = progress or (lambda phase, detail="": None)
    records = checked.records
    published = tuple((d.name, d.source) for d in checked.downloads) + tuple((n, m.InMemoryFile(b)) for n, b in schema_files())
    say("render", f"{len(records.config.languages)} languages")
    pages = iter_pages(records, checked.results, verdicts=verdict_source(records), changelog=checked.changelog,
                       catalogs=checked.catalogs, build_date=checked.build_date, downloads=published, templates=TEMPLATES,
                       jobs=jobs, comparisons=checked.comparisons, write=write)
    title = records.config.title.get("en") or next(iter(records.config.title.values()))
    extra = (
        ("changelog.atom", render_atom(checked.changelog, base_url=records.config.base_url, title=title, updated=checked.build_date)),
        ("changelog.json", render_changelog_json(checked.changelog)),
    )
    return pages, published, extra


def build_site(records_dir: Path, out: Path, *, jobs: int = 1, progress: Progress | None = None) -> BuildSummary:
    """Check everything, render everything, then replace `out` in one swap; a failure leaves `out` untouched.

    First of all `out` is checked (site.check_out_dir): a folder that is not a site sitegen built, the records, the
    working folder, or a file are refused with an OutFolderError before a record is read or anything is written.
    """
    target = check_out(Path(out), records_dir=Path(records_dir))
    checked = check_records(Path(records_dir), progress=progress, jobs=jobs)
    with staging(target) as folder:
        pages, published, extra = render_site(checked, jobs=jobs, progress=progress, write=PageWriter(folder))
        if progress:
            progress("write", f"{len(published)} downloads and the pages into {out}")
        manifest = write_site(_counting(pages, progress), target, published=published, extra_files=extra, staged=folder)
    return BuildSummary(Path(out), sum(1 for f in manifest.files if f.path.endswith(".html")), len(published))


def _counting(pages, progress: Progress | None, every: int = 5000):
    """Pass pages through, saying every so often how many were rendered (long builds only)."""
    for count, page in enumerate(pages, 1):
        if progress and count % every == 0:
            progress("render", f"{count} pages")
        yield page
