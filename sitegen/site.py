"""Writes the rendered site into a fresh folder beside the target and swaps it in, so a failed build leaves the old site whole."""

from __future__ import annotations

import hashlib
import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Iterable, Mapping, Sequence

from sitegen.errors import Diagnostic, PublicationError
from sitegen.model import InMemoryFile, SourceFile
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
    pages: Iterable[Page],
    out_dir: Path,
    *,
    published: Sequence[tuple[str, SourceFile | InMemoryFile]],
    extra_files: Sequence[tuple[str, bytes]] = (),
) -> SiteManifest:
    """Write pages, extra files and the published bytes (under downloads/, with SHA256SUMS), then swap the folder in.

    Pages may come from a generator: each is written as it arrives, so the site never has to fit in memory; so are the
    published files, read one at a time (a records file is checked against the digest taken when it was loaded).
    """
    out_dir = Path(out_dir)
    downloads = tuple(sorted(published, key=lambda item: item[0]))
    if any(name == SUMS for name, _ in downloads):
        raise PublicationError([Diagnostic(f"{DOWNLOADS}/{SUMS}", None, None, None, "a published file may not be called SHA256SUMS", "site.duplicate-path")])
    parent = out_dir.parent
    parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{out_dir.name}.tmp-", dir=parent))
    try:
        written = _Writer(tmp)
        for page in pages:
            written.add(page.path, page.data)
        for path, data in extra_files:
            written.add(path, data)
        for name, file in downloads:
            written.add(f"{DOWNLOADS}/{name}", file.data)
        written.add(f"{DOWNLOADS}/{SUMS}", sha256sums(downloads))
        _verify_downloads(tmp, written.files)
        os.chmod(tmp, 0o755)  # mkdtemp makes the folder private; a site is meant to be read
        _swap(tmp, out_dir)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return SiteManifest(str(out_dir), tuple(sorted(written.files.values(), key=lambda f: f.path)))


def sha256sums(downloads: Sequence[tuple[str, SourceFile | InMemoryFile]]) -> bytes:
    """coreutils' format, `<hex>  <name>` sorted by name, so `sha256sum -c --strict SHA256SUMS` passes inside downloads/."""
    return "".join(f"{file.sha256}  {name}\n" for name, file in sorted(downloads, key=lambda item: item[0])).encode("utf-8")


class _Writer:
    """Writes files below one folder, refusing a path that leaves it or was written before."""

    def __init__(self, root: Path):
        self.root = root
        self.files: dict[str, SiteFile] = {}
        self.folders: set[Path] = set()

    def add(self, path: str, data: bytes) -> None:
        if not _safe_path(path):
            raise PublicationError([Diagnostic(path, None, None, None, "not a safe relative path inside the site", "site.unsafe-path")])
        if path in self.files:
            raise PublicationError([Diagnostic(path, None, None, None, "two files would be written to the same path", "site.duplicate-path")])
        target = self.root / path
        if target.parent not in self.folders:
            target.parent.mkdir(parents=True, exist_ok=True)
            self.folders.add(target.parent)
        target.write_bytes(data)
        self.files[path] = SiteFile(path, len(data), hashlib.sha256(data).hexdigest())


def _safe_path(path: str) -> bool:
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and "\\" not in path and all(p not in ("", ".", "..") for p in parts)


def _verify_downloads(tmp: Path, files: Mapping[str, SiteFile]) -> None:
    """Read every download back: the checksums the pages show were computed from these bytes before rendering."""
    problems = []
    for path, item in sorted(files.items()):
        if path.startswith(f"{DOWNLOADS}/") and hashlib.sha256((tmp / path).read_bytes()).hexdigest() != item.sha256:
            problems.append(Diagnostic(path, None, None, None, "the bytes on disk differ from the bytes rendered", "site.write-mismatch"))
    if problems:
        raise PublicationError(problems)


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
