"""What the last build with a cache was made from and what it wrote, so a build with nothing changed can stop at once.

The stamp names the digest of every input (the records folder, sitegen's source, templates and catalogs, the
environment the build reads) and every file of the site it wrote, with size and modification time. A build whose
inputs have that digest, into that folder, whose files are still exactly those, would write the same bytes again.
A stamp that does not parse or does not have this form is no stamp: the build goes on as if there were none.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Mapping

from sitegen.core.files import read_regular, replace_quietly
from sitegen.publish.siteindex import site_stats
from sitegen.render.pagecache import PageCache, folders_digest

STAMP = "build.json"
FORMAT = "sitegen-build-stamp/1"
ENVIRONMENT = ("SOURCE_DATE_EPOCH",)  # what the build reads from its environment


@dataclass(frozen=True)
class Stamp:
    inputs: str
    out: str
    files: tuple[tuple[str, int, int], ...]  # (path, size, mtime_ns) of every file of the site, sorted
    pages: int
    downloads: int


def input_digest(records_dir: Path, sources: tuple[Path, ...], *, version: str, environ: Mapping[str, str] = os.environ) -> str:
    """The digest of everything a build reads: a change anywhere in it gives another digest."""
    digest = hashlib.sha256(FORMAT.encode("ascii") + b"\0" + version.encode("utf-8") + b"\0")
    digest.update(folders_digest(Path(records_dir), *sources))
    for name in ENVIRONMENT:
        value = environ.get(name)
        digest.update(name.encode("ascii") + (b"\1" + value.encode("utf-8", "surrogateescape") if value is not None else b"\0") + b"\0")
    return digest.hexdigest()


def site_files(out: Path, stats: Mapping[str, os.stat_result] | None = None) -> tuple[tuple[str, int, int], ...]:
    """Every file below `out` with its size and modification time, sorted by path (symbolic links as they are); from
    `stats` (siteindex.site_stats of `out`) when taken already."""
    stats = site_stats(out) if stats is None else stats
    return tuple(sorted((path, info.st_size, info.st_mtime_ns) for path, info in stats.items()))


def written_files(written: Iterable) -> tuple[tuple[str, int, int], ...] | None:
    """site_files of a site just written, from what its writers said of each file (site.SiteFile.made) instead of listing
    it again; None when a writer did not say. A file put into the site by anything else makes the next listing differ,
    so that build is not up to date: the safe side."""
    files = []
    for file in written:
        if file.made is None:
            return None
        files.append((file.path, file.made[0], file.made[3]))
    return tuple(sorted(files))


def read_stamp(cache: PageCache) -> Stamp | None:
    """The cache's stamp, or None when it is missing, unreadable or not of this form."""
    if not cache.usable:
        return None
    try:
        data = json.loads(read_regular(cache.root / STAMP))
        if data["format"] != FORMAT:
            return None
        files = tuple((str(p), int(s), int(t)) for p, s, t in data["files"])
        stamp = Stamp(str(data["inputs"]), str(data["out"]), files, int(data["pages"]), int(data["downloads"]))
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return stamp


def write_stamp(cache: PageCache, stamp: Stamp) -> None:
    """Keep the stamp for the next build (written beside, then renamed); one that cannot be written only costs that shortcut."""
    if not cache.usable:
        return
    body = {"format": FORMAT, "inputs": stamp.inputs, "out": stamp.out, "files": [list(f) for f in stamp.files],
            "pages": stamp.pages, "downloads": stamp.downloads}
    replace_quietly(cache.root / STAMP, (json.dumps(body, sort_keys=True, separators=(",", ":")) + "\n").encode("utf-8"))


def forget_stamp(cache: PageCache) -> None:
    """Remove the stamp before a build replaces the site it describes."""
    cache.forget(STAMP)


def up_to_date(stamp: Stamp | None, inputs: str, out: Path) -> bool:
    """Whether `out` is the site a build of these inputs wrote last, untouched since."""
    if stamp is None or stamp.inputs != inputs or stamp.out != str(out):
        return False
    try:
        return site_files(out) == stamp.files
    except OSError:
        return False
