"""`verify --pages`: the site rebuilt from the downloads alone, by the build's own phases, compared file by file with the
site as published, so a reader sees that every page says what the published records say."""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Callable, Iterator, Mapping

from sitegen.build import (Checked, build_date, catalogs_phase, changelog_phase, downloads_phase, exports_phase, provenance_phase,
                           published_files, render_site)
from sitegen.core import model as m
from sitegen.core.errors import Diagnostic
from sitegen.core.fingerprint import named_on_page, sitegen_fingerprint
from sitegen.publish.site import DOWNLOADS, MARKER, SUMS, sha256sums
from sitegen.score.results import first_byte_apart


@dataclass(frozen=True)
class Rebuilt:
    """How many files the rebuilt site has, and every one that differs from, or is missing on, the published site."""

    files: int
    problems: tuple[Diagnostic, ...]


def compare_pages(records: m.Records, recorded: Mapping[str, m.RunResult], comparisons: Mapping, site, *,
                  published_sha256: Callable[[str], str | None], jobs: int = 1, records_dir: Path,
                  signature: bytes | None = None, detail_runs: int | None = None) -> Rebuilt:
    """Rebuild every page and compare it with `site` (a reader of the published site); a downloaded file is compared by
    its digest as read (`published_sha256` of its name below downloads/, None when missing), not read a second time.

    Pages are rendered as `sitegen build --detail-runs detail_runs` renders them (None: every run in detail).
    The log and allowed_signers are read beside the records in `records_dir`, as the build reads them; no key signs
    again, so a published `signature` (checked by its own check) stands in for the one the build made.
    Raise a DiagnosticsError when the downloads cannot be built at all (the build would refuse them the same way).
    """
    downloads, catalogs = downloads_phase(records), catalogs_phase(records)
    exports = exports_phase(records, recorded, catalogs, downloads)
    provenance = provenance_phase(records_dir, recorded, published_files(records, downloads, exports))
    if signature is not None:
        provenance = replace(provenance, signature=signature)
    checked = Checked(records, recorded, downloads, changelog_phase(records), catalogs, build_date(records), comparisons,
                      provenance, exports)
    # the processes that render the pages compare them too: only a page's verdict travels back, never its bytes
    pages, published, extra = render_site(checked, jobs=jobs, write=PageComparer(site), detail_runs=detail_runs)
    problems: list[Diagnostic] = []
    rebuilt: set[str] = set()
    for path, data, digest in _site_files(pages, published, extra):
        rebuilt.add(path)
        if type(data) is Compared:
            if data.problem is not None:
                problems.append(data.problem)
            continue
        shown = site.shown(path)
        if digest is not None:
            theirs = published_sha256(path[len(DOWNLOADS) + 1:])
            if theirs is None:
                problems.append(Diagnostic(shown, None, None, None, "the site rebuilt from the downloads publishes this file; "
                                           "it is missing from the published site", "verify.page-missing"))
            elif theirs != digest:
                problems.append(Diagnostic(shown, None, None, None, "differs from the file the site rebuilt from the downloads "
                                           "publishes here", "verify.page-differs"))
            continue
        problem = _page_problem(site, path, data)
        if problem is not None:
            problems.append(problem)
    names = site.names()
    for name in names or ():
        if name not in rebuilt and name != MARKER:
            problems.append(Diagnostic(site.shown(name), None, None, None, "the published site has this file; the site rebuilt "
                                       "from the downloads does not", "verify.page-extra"))
    return Rebuilt(len(rebuilt), tuple(problems))


@dataclass(frozen=True)
class Compared:
    """A rebuilt page compared with the published one where it was rendered: its path, and what differs (None: nothing)."""

    path: str
    problem: Diagnostic | None


@dataclass(frozen=True)
class PageComparer:
    """Compares each page as it is rendered (the build's `write`, run by the rendering processes, which inherit it)."""

    site: object  # the published site's reader (audit/source.py)

    def __call__(self, page) -> Compared:
        return Compared(page.path, _page_problem(self.site, page.path, page.data))


def _page_problem(site, path: str, data: bytes) -> Diagnostic | None:
    """What is wrong with the published file at `path`, which the rebuilt site has with these bytes; None when it is the same."""
    theirs = site.read(path)
    if theirs is None:
        return Diagnostic(site.shown(path), None, None, None, "the site rebuilt from the downloads has this page; the published "
                          "site does not", "verify.page-missing")
    if theirs != data:
        line, column = _first_difference(theirs, data)
        return Diagnostic(site.shown(path), line, column, None, "differs from the page rebuilt from the downloads, first here",
                          "verify.page-differs")
    return None


def _site_files(pages, published, extra) -> Iterator[tuple[str, bytes | Compared | None, str | None]]:
    """(path, bytes, None) of each page and extra file, (path, Compared, None) of a page compared where it was rendered;
    (path, None, SHA-256) of each download and SHA256SUMS."""
    for page in pages:
        yield page.path, page if type(page) is Compared else page.data, None
    for name, data in extra:
        yield name, data, None
    for name, file in published:
        yield f"{DOWNLOADS}/{name}", None, file.sha256
    yield f"{DOWNLOADS}/{SUMS}", sha256sums(published), None


def _first_difference(a: bytes, b: bytes) -> tuple[int, int]:
    """Line and column (in bytes, from 1) of the first byte where `a` differs from `b`."""
    at = first_byte_apart(a, b)
    return a.count(b"\n", 0, at) + 1, at - (a.rfind(b"\n", 0, at) + 1) + 1


def other_sitegen(site, lang: str) -> Diagnostic | None:
    """When the downloads page names the fingerprint of another sitegen's source than this one's (core/fingerprint.py),
    a diagnostic saying so at that page; None when it names this one or none."""
    named, ours = named_on_page(site.read(f"{lang}/downloads.html") or b""), sitegen_fingerprint()
    if named is None or named == ours:
        return None
    return Diagnostic(site.shown(f"{lang}/downloads.html"), None, None, None,
                      f"the site was built by a sitegen whose source has the fingerprint {named}; "
                      f"this sitegen's is {ours}: pages may differ for that reason alone (rebuild with the sitegen that "
                      "built the site)", "verify.other-sitegen")
