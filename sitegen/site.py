"""Writes the rendered site into a fresh folder beside the target and swaps it in, so a failed build leaves the old site whole."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Sequence

from sitegen.errors import Diagnostic, PublicationError
from sitegen.pages import Page

DOWNLOADS = "downloads"
SUMS = "SHA256SUMS"


@dataclass(frozen=True)
class SiteFile:
    path: str  # POSIX, relative to the site root
    size: int
    sha256: str


@dataclass(frozen=True)
class SiteManifest:
    """What was written, so the caller can report it and tests can check it without walking the folder."""

    out_dir: str
    files: tuple[SiteFile, ...]  # sorted by path

    def file(self, path: str) -> SiteFile:
        for item in self.files:
            if item.path == path:
                return item
        raise KeyError(path)


def write_site(
    pages: Sequence[Page],
    out_dir: Path,
    *,
    published: Sequence[tuple[str, bytes]],
    extra_files: Sequence[tuple[str, bytes]] = (),
) -> SiteManifest:
    """Write pages, extra files and the published bytes (under downloads/, with SHA256SUMS), then swap the folder in."""
    out_dir = Path(out_dir)
    files = _plan(pages, published, extra_files)
    parent = out_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=parent))
    try:
        for path, data in files:
            target = tmp / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        manifest = _verify(tmp, files, out_dir)
        os.chmod(tmp, 0o755)  # mkdtemp makes the folder private; a site is meant to be read
        _swap(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return manifest


def sha256sums(downloads: Sequence[tuple[str, bytes]]) -> bytes:
    """coreutils' format, `<hex>  <name>` sorted by name, so `sha256sum -c --strict SHA256SUMS` passes inside downloads/."""
    return "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(downloads)).encode("utf-8")


def _plan(pages: Sequence[Page], published: Sequence[tuple[str, bytes]], extra: Sequence[tuple[str, bytes]]) -> tuple[tuple[str, bytes], ...]:
    """Every file of the site with its exact bytes, each path checked once; nothing is written before the plan holds."""
    problems = []
    downloads = tuple(sorted(published))
    planned: dict[str, bytes] = {}
    everything = [(p.path, p.data) for p in pages] + list(extra)
    everything += [(f"{DOWNLOADS}/{name}", data) for name, data in downloads]
    everything.append((f"{DOWNLOADS}/{SUMS}", sha256sums(downloads)))
    for path, data in everything:
        if not _safe_path(path):
            problems.append(Diagnostic(path, None, None, None, "not a safe relative path inside the site", "site.unsafe-path"))
        elif path in planned:
            problems.append(Diagnostic(path, None, None, None, "two files would be written to the same path", "site.duplicate-path"))
        else:
            planned[path] = data
    names = {name for name, _ in downloads}
    if SUMS in names:
        problems.append(Diagnostic(f"{DOWNLOADS}/{SUMS}", None, None, None, "a published file may not be called SHA256SUMS", "site.duplicate-path"))
    if problems:
        raise PublicationError(sorted(problems))
    return tuple(sorted(planned.items()))


def _safe_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and "\\" not in path and all(p not in ("", ".", "..") for p in parts)


def _verify(tmp: Path, files: tuple[tuple[str, bytes], ...], out_dir: Path) -> SiteManifest:
    """Read every written file back: the checksums the pages show were computed from these bytes before rendering."""
    problems = []
    listed = []
    for path, data in files:
        written = (tmp / path).read_bytes()
        digest = hashlib.sha256(written).hexdigest()
        if digest != hashlib.sha256(data).hexdigest():
            problems.append(Diagnostic(path, None, None, None, "the bytes on disk differ from the bytes rendered", "site.write-mismatch"))
        listed.append(SiteFile(path, len(written), digest))
    if problems:
        raise PublicationError(problems)
    return SiteManifest(str(out_dir), tuple(listed))


def _swap(tmp: Path, out_dir: Path) -> None:
    """Rename the old site aside, the new one into place, then delete the old; put the old one back if the rename fails."""
    if not out_dir.exists():
        os.rename(tmp, out_dir)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.old-", dir=out_dir.parent))
    aside = old / "site"
    os.rename(out_dir, aside)
    try:
        os.rename(tmp, out_dir)
    except BaseException:
        os.rename(aside, out_dir)
        shutil.rmtree(old, ignore_errors=True)
        raise
    shutil.rmtree(old, ignore_errors=True)
