"""Renders every page of the site, in each language, from records, scored results, the changelog and the downloads."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Collection, Iterator, Mapping, Sequence

from sitegen import __version__
from sitegen.changelog.changes import Changelog
from sitegen.core.fingerprint import MARK, SHELL
from sitegen.core.model import InMemoryFile, Records, RunResult, SourceFile
from sitegen.core.workers import ordered_map
from sitegen.load.spool import without_seals
from sitegen.render.cases import Verdicts, pairs_by_case
from sitegen.render.environment import Detail, Page, Renderer
from sitegen.render.facts import run_summaries, site_facts, uncompared_runs
from sitegen.render.plan import AHEAD_PER_JOB, CASE_CHUNK, PageJob, page_tasks, render_in_worker, short_task
from sitegen.render.prose import load_content, render_sitemap
from sitegen.render.views import runs_by_case
from sitegen.score.measures.registry import EXAMPLE_CASES

__all__ = ("DownloadRow", "Page", "iter_pages", "render_pages")  # Page: what the site writer takes

STATIC_FILES = ("favicon.svg", "site.css")  # in templates/static/, written as they are under static/


@dataclass(frozen=True)
class DownloadRow:
    """A file served under downloads/, with the size and checksum of exactly the bytes written."""

    name: str
    size: int
    sha256: str
    schema: bool
    export: bool = False  # one of the standard exports (CSV, Every Eval Ever, Croissant)
    metadata: bool = False  # the public run metadata under metadata/ (publish/metadata.py)


def render_pages(records: Records, results: Mapping[str, RunResult], **options: Any) -> tuple[Page, ...]:
    """Every page of iter_pages (same options), held in memory and sorted by path: for tests and small sites.

    `downloads` are the (name under downloads/, file) pairs the writer will publish; the downloads page shows
    sizes and checksums of exactly these files' bytes. `templates` is the folder of the templates, the static files
    and (unless `content_dir` names another) the prose in content/.
    """
    return tuple(sorted(iter_pages(records, results, **options), key=lambda p: p.path))


def iter_pages(
    records: Records,
    results: Mapping[str, RunResult],
    *,
    verdicts: Verdicts,
    changelog: Changelog | None,
    catalogs: Mapping[str, Any],
    build_date: str,
    downloads: Sequence[tuple[str, SourceFile | InMemoryFile]],
    templates: Path,
    content_dir: Path | None = None,
    jobs: int = 1,
    comparisons: Mapping[str, Any] | None = None,
    write: Callable[[Page], Any] | None = None,
    exports: Collection[str] = (),
    provenance: Any = None,
    reasons: Mapping[str, bytes] | None = None,
    cache: Any = None,
    salt: bytes = b"",
    detail_runs: int | None = None,
    held: Mapping[str, Any] | None = None,
    source_fingerprint: str = "",
) -> Iterator[Any]:
    """The pages of render_pages one at a time, in a fixed order, so a large site can be written without holding it all.

    With jobs > 1 the case and run pages (nearly all of a large site) are rendered in that many forked processes; the
    order, and so every byte, stays the same as with one. With `write` (the writer's PageWriter on its staging folder),
    those pages are written where they were rendered and what `write` returns comes in their place: a page's bytes
    never travel between processes. `exports` names the downloads that are standard exports (listed apart). `reasons`
    are the verifying pass's packed reasons per run (score/reasons.py); a run without them has its reasons derived again
    where its pages show them. With `cache` (a pagecache.PageCache) case and case-run
    pages whose inputs are unchanged come from it; `salt` must then describe everything else they are made of (templates,
    catalogs, ...), and `held` (core/files.HeldFile by path) names the previous site's pages the last build made, so
    `write` can link them unread. With `detail_runs` K, a case version has a page per run for its newest K runs only (environment.Detail).
    `source_fingerprint` is the fingerprint of the sitegen that builds (core/fingerprint.py), which the downloads pages name.
    """
    config = records.config
    languages = tuple(config.languages)
    listed = tuple(
        DownloadRow(name=name, size=file.size, sha256=file.sha256, schema=name.startswith("schemas/"), export=name in exports,
                    metadata=name.startswith("metadata/"))
        for name, file in sorted(downloads, key=lambda item: item[0])
    )
    published = tuple(sorted(records.published_runs, key=lambda r: (r.date, r.id), reverse=True))
    content_root = content_dir or templates / "content"
    headlines, states, sealed = run_summaries(results, published)
    site = site_facts(records, headlines, published, changelog, sealed)
    runs_by = runs_by_case(records, published)
    detail = Detail(runs_by, detail_runs)
    renderers = {lang: Renderer(lang, catalogs[lang], templates=templates, config=config, languages=languages, build_date=build_date,
                                detail=detail)
                 for lang in languages}
    examples = {m: (cv if cv in records.case_versions else None) for m, cv in EXAMPLE_CASES.items()}
    paths: list[str] = []  # for the sitemap; only paths are kept, never the pages

    def keep(page: Page) -> Page:
        paths.append(page.path)
        return page

    common = {"site": site, "downloads": listed, "changelog": changelog}

    def shared(part: str) -> list[Page]:
        """A language's overview, method, changelog, downloads and accessibility pages, or (part "") the default
        language's overview at the root and the 404 page: rendered by a worker like every other page, so that the workers
        need not wait for them."""
        if not part:
            default = renderers[config.default_language]
            # one 404 page serves every language's missed addresses: it says so in each, the default language first
            elsewhere = tuple((lang, renderers[lang].env.globals["_"]) for lang in languages if lang != default.lang)
            return [default.page("index.html.j2", "index.html", common, at_root=True),
                    default.page("404.html.j2", "404.html", {"elsewhere": elsewhere}, at_root=True, standalone=True)]
        renderer, content = renderers[part], load_content(content_root, part)
        return [renderer.page("index.html.j2", "index.html", common),
                renderer.page("method.html.j2", "method.html", {**common, "content": content, "examples": examples}),
                renderer.page("changelog.html.j2", "changelog.html", {**common, "content": content}),
                renderer.page("downloads.html.j2", "downloads.html", {**common, "content": content, "provenance": provenance,
                                                                      "sitegen_version": __version__,
                                                                      "source_fingerprint": source_fingerprint, "source_shell": SHELL,
                                                                      "fingerprint_mark": MARK}),
                renderer.page("accessibility.html.j2", "accessibility.html", {**common, "content": content})]

    pairs = pairs_by_case(records)
    case_ids = sorted(records.case_versions)
    outcomes = {run_id: headline.outcome for run_id, headline in headlines.items()}
    # without the verifying pass's comparisons, a page cannot tell which runs it compared: it says nothing of either
    uncompared = uncompared_runs(records, outcomes, comparisons, changelog) if comparisons is not None else {}
    job = PageJob(records, without_seals(results), verdicts, renderers, languages, runs_by, states, outcomes,
                  common, comparisons or {}, write, pairs, reasons or {},
                  cache=cache, salt=salt, detail=detail, held=held or {}, shared=shared, uncompared=uncompared)
    tasks = [("shared", None, (part,)) for part in (*languages, "")] + page_tasks(case_ids, published, runs_by, detail)
    if jobs <= 1 or len(case_ids) < 2 * CASE_CHUNK:
        for task in tasks:
            yield from map(keep, job.render_task(task))
    else:
        # this process renders too, one worker fewer: every process forked from it ends up holding its own copy of most of
        # its memory (the pages of the loaded records it touches), so at 10,000 case versions that is about 190 MiB less
        for pages in ordered_map(render_in_worker, tasks, jobs=jobs, context=job, here=short_task, ahead=AHEAD_PER_JOB * jobs):
            yield from map(keep, pages)
    for name in STATIC_FILES:
        yield keep(Page(f"static/{name}", (templates / "static" / name).read_bytes()))
    yield from render_sitemap(paths, base_url=config.base_url, build_date=build_date)
