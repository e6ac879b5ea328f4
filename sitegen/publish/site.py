"""Writes the rendered site into a fresh folder beside the target and swaps it in, so a failed build leaves the old site whole."""

from __future__ import annotations

import hashlib
import os
import stat
from contextlib import ExitStack, contextmanager
from pathlib import Path, PurePosixPath
from typing import Any, Callable, Collection, Iterable, Iterator, Sequence

from sitegen.core.errors import Diagnostic, OutFolderError, PublicationError, WriteError
from sitegen.core.files import HeldFile, file_sha256
from sitegen.core.model import InMemoryFile, SourceFile
from sitegen.render.pages import Page
from sitegen.publish.manifest import FileRows, SiteFile, SiteManifest
from sitegen.publish.swap import locked_folder, remove_tree, staged_prefix, swap_in, sweep

DOWNLOADS = "downloads"
SUMS = "SHA256SUMS"
# Written into the root of every site, always the same line (no date: builds stay byte-identical); a later build
# replaces a folder only if it is empty or holds this file with these bytes. Not a page: not in the sitemap or SHA256SUMS.
MARKER = ".sitegen-site"
MARKER_TEXT = b"This folder is a site built by sitegen; the next sitegen build replaces it whole.\n"


def check_out_dir(out_dir: Path, *, records_dir: Path | None = None, cwd: Path | None = None) -> Path:
    """The resolved folder a site may be (re)placed at; raise OutFolderError if replacing it could destroy anything else.

    Refused: the records folder, a folder inside it or holding it; the working folder (`cwd`, by default the current
    one) or a folder holding it, so `.` and `..`; a path below a file; anything but a folder; a folder that is not
    empty and is not a site sitegen built (no MARKER file with MARKER_TEXT). Nothing is written or created.
    """
    given = str(out_dir)

    def refuse(message: str, code: str) -> OutFolderError:
        return OutFolderError([Diagnostic(given, None, None, None, message, code)])

    try:
        target = Path(out_dir).resolve()  # symbolic links followed, `..` taken away: the folder that would be replaced
    except RuntimeError:  # a loop of symbolic links
        raise refuse("cannot build the site here: the path is a loop of symbolic links", "out.not-a-folder") from None

    if cwd is None:
        try:
            cwd = Path.cwd()
        except OSError:  # the working folder was deleted: nothing there to protect
            cwd = None
    if cwd is not None:
        here = Path(cwd).resolve()
        if target == here or target in here.parents:
            where = "the current folder" if target == here else f"a parent of the current folder {here}"
            raise refuse(f"cannot build the site into {where}: a build replaces the whole folder it writes; "
                         "name a sub-folder, such as site", "out.working-folder")
    if records_dir is not None:
        records = Path(records_dir).resolve()
        if target == records:
            raise refuse("cannot build the site into the records folder: the site would replace the records; name another folder",
                         "out.records-folder")
        if records in target.parents:
            raise refuse(f"cannot build the site inside the records folder {records}; name a folder outside it", "out.records-folder")
        if target in records.parents:
            raise refuse(f"cannot build the site into a folder holding the records folder {records}: replacing it would "
                         "delete the records; name another folder", "out.records-folder")
    for above in target.parents:
        if above.exists():
            if not above.is_dir():
                raise refuse(f"cannot build the site below {above}, which is not a folder", "out.not-a-folder")
            break
    if not target.exists():
        return target
    if not target.is_dir():
        raise refuse("cannot replace this with the site: it is not a folder; remove it or name another path", "out.not-a-folder")
    if any(target.iterdir()) and not is_site(target):
        raise refuse(f"cannot replace this folder with the site: it is not empty and holds no {MARKER} file, so it is not "
                     "a site sitegen built; name a new or empty folder, or move its contents away first (a site built by a sitegen "
                     "that did not write this file yet must be deleted once by hand)", "out.not-a-site")
    return target


def is_site(folder: Path) -> bool:
    """Whether `folder` holds the marker every site sitegen builds carries (a regular file with exactly MARKER_TEXT)."""
    marker = Path(folder) / MARKER
    if marker.is_symlink() or not marker.is_file():
        return False
    with open(marker, "rb") as file:
        return file.read(len(MARKER_TEXT) + 1) == MARKER_TEXT


@contextmanager
def staging(out_dir: Path, *, jobs: int = 1) -> Iterator[Path]:
    """A fresh folder beside `out_dir` for the new site (same filesystem, so the swap is a rename); gone again unless swapped in.

    What builds killed earlier left beside `out_dir` is swept first (swap.sweep); the folder is locked while in use, and
    deleted afterwards (after an exchange it holds the old site) by `jobs` threads (swap.remove_tree).
    """
    out_dir = Path(out_dir).resolve()
    with ExitStack() as stack:
        with writing(out_dir.parent, "create the folder for the new site here", at_failed_path=False):
            out_dir.parent.mkdir(parents=True, exist_ok=True)
            sweep(out_dir)
            folder = stack.enter_context(locked_folder(out_dir.parent, staged_prefix(out_dir)))
        try:
            yield folder
        finally:
            remove_tree(folder, jobs=jobs)  # after an exchange this is the old site; after a rename, nothing


@contextmanager
def writing(path: Path | str, action: str = "write", *, at_failed_path: bool = True) -> Iterator[None]:
    """Turn a failure of the file system (disk full, read-only, no permission) into a WriteError placed at its path
    (or at `path`, when the one that failed is a made-up name that means nothing to the reader)."""
    try:
        yield
    except OSError as exc:
        where = exc.filename if exc.filename is not None and at_failed_path else path
        reason = exc.strerror or str(exc) or type(exc).__name__
        raise WriteError([Diagnostic(str(where), None, None, None, f"cannot {action}: {reason[:1].lower()}{reason[1:]}; "
                                     "the previous site is untouched", "site.write-failed")]) from None


class PageWriter:
    """Writes pages below one folder and says what was written; the processes that render pages use one each.

    With `previous` (the site being replaced), a page whose bytes the previous site's file at its path holds exactly
    (read and compared, never assumed) is a hard link to that file instead of a new copy: the old site stays as it was
    until the swap, and a tampered or changed file there is written afresh.
    """

    def __init__(self, root: Path, previous: Path | None = None):
        # paths as text, joined with "/": tens of thousands of pages are written or linked, and pathlib costs more than that
        self._root = str(root)
        self._previous = None if previous is None else str(previous)
        self._folders: set[str] = set()  # made already: spares a failing mkdir per page
        self._plain: dict[str, bool] = {}  # previous site's folders: reached through no symbolic link (asked once each)

    def __call__(self, page: Page, key: str = "") -> SiteFile:
        target = self._target(page.path)
        with writing(target):
            data = page.data
            made = self._linked(page.path, target, len(data), lambda held: held.read() == data) if self._previous is not None else None
            if made is None:
                made = _written(target, data)
        return SiteFile(page.path, len(data), hashlib.sha256(data).hexdigest(), key, made)

    def reuse(self, path: str, size: int, sha256: str, key: str = "") -> SiteFile | None:
        """Link the previous site's file at `path` when it holds `size` bytes whose SHA-256 is `sha256` (read and hashed,
        never assumed), and say what was written; None when there is no such file (the caller then writes the bytes)."""
        target = self._target(path)
        if self._previous is None:
            return None
        with writing(target):
            made = self._linked(path, target, size, lambda held: file_sha256(held) == sha256)
        return None if made is None else SiteFile(path, size, sha256, key, made)

    def copy(self, path: str, file: Any) -> SiteFile:
        """Write a published file (with `size`, `sha256` and `copy_to`, as a SourceFile has) a piece at a time."""
        with writing(target := self._target(path)):
            return SiteFile(path, file.size, file.sha256, "", _written(target, file))

    def relink(self, path: str, held: HeldFile) -> SiteFile | None:
        """Link the previous site's file at `path` when it is still the very file the last build left there (`held`, from
        publish/siteindex.py: the same device, inode, size and modification time, no other name): its bytes are those
        that build wrote, so they are not read again. None when it is not (the caller then reads and compares)."""
        if self._previous is None:
            return None
        target = self._target(path)
        old = f"{self._previous}/{path}"
        if not self._plain_folder(old):
            return None
        with writing(target):
            made = _relinked(old, target, held)
        return None if made is None else SiteFile(path, held.size, held.sha256, held.key, made)

    def _linked(self, path: str, target: str, size: int, holds: Callable[[Any], bool]) -> tuple[int, int, int, int] | None:
        """_linked on the previous site's file at `path`, its folder checked once for a symbolic link on the way."""
        old = f"{self._previous}/{path}"
        return _linked(old, target, size, holds) if self._plain_folder(old) else None

    def _plain_folder(self, old: str) -> bool:
        """Whether the folder of the previous site's file `old` is reached through no symbolic link (asked once a folder)."""
        folder = old.rpartition("/")[0]
        plain = self._plain.get(folder)
        if plain is None:
            plain = self._plain[folder] = os.path.realpath(folder) == os.path.abspath(folder)
        return plain

    def _target(self, path: str) -> str:
        """Where a file of the site goes below the root, its folder made; an unsafe path is refused."""
        if not _safe_path(path):
            raise PublicationError([Diagnostic(path, None, None, None, "not a safe relative path inside the site", "site.unsafe-path")])
        target = f"{self._root}/{path}"
        folder = target.rpartition("/")[0]
        if folder not in self._folders:
            with writing(target):
                os.makedirs(folder, exist_ok=True)
            self._folders.add(folder)
        return target


def _relinked(old: str, new: str, held: HeldFile) -> tuple[int, int, int, int] | None:
    """Make `new` a hard link to `old` and keep it when it names the regular file `held` describes, unchanged (an edit in
    place changes its modification time), with no other name than these two; what it is, as _made says, or None.

    The link is made first and what it names checked after: one lstat a page, and what is checked is what was linked."""
    try:
        os.link(old, new, follow_symlinks=False)
    except OSError:
        return None
    try:
        info = os.lstat(new)
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 2 and _held_as(info) == _held_as(held):
            return _made(info)
        os.unlink(new)
    except OSError:
        pass
    return None


def _held_as(info: os.stat_result | HeldFile) -> tuple[int, int, int, int]:
    """What tells a file from another, or from itself edited: its size, device, inode and modification time."""
    if isinstance(info, HeldFile):
        return info.size, info.dev, info.ino, info.mtime_ns
    return _made(info)


def _made(info: os.stat_result) -> tuple[int, int, int, int]:
    """A file's size, device, inode and modification time (SiteFile.made)."""
    return info.st_size, info.st_dev, info.st_ino, info.st_mtime_ns


def _written(target: str, data: Any) -> tuple[int, int, int, int]:
    """Write `data` to `target` (created or emptied, as open(target, "wb") does) and say what the file is once written:
    bytes, or a published file written by its copy_to a piece at a time (a records file may be hundreds of megabytes)."""
    fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o666)
    try:
        with open(fd, "wb", closefd=False) as file:
            if type(data) is bytes:
                file.write(data)
            else:
                data.copy_to(file)
        return _made(os.fstat(fd))
    finally:
        os.close(fd)


def _linked(old: str, new: str, size: int, holds: Callable[[Any], bool]) -> tuple[int, int, int, int] | None:
    """Make `new` a hard link to `old` when that is a regular file of `size` bytes that `holds` accepts (given it open), and say what it
    is (as _made does) when it now is one (linking costs a fraction of writing the bytes again: most of a rebuild's files are unchanged).

    Only a file of the previous site's own is linked: one with no other name (a second hard link, made by anyone, could
    change the published bytes later through that name) and not itself a symbolic link (which could lead outside it; the
    caller checks its folders). The link must name the very file that was read (the same device and inode): a file put
    at `old` meanwhile is not kept.
    """
    try:
        fd = os.open(old, os.O_RDONLY | os.O_NOFOLLOW)
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size != size or info.st_nlink != 1:
            return None
        with open(fd, "rb", closefd=False) as file:
            if not holds(file):
                return None
        os.link(old, new, follow_symlinks=False)
    except OSError:
        return None
    finally:
        os.close(fd)
    now = os.stat(new, follow_symlinks=False)
    if (now.st_dev, now.st_ino) == (info.st_dev, info.st_ino):
        return _made(now)
    os.unlink(new)
    return None


def write_site(
    pages: Iterable[Page | SiteFile],
    out_dir: Path,
    *,
    published: Sequence[tuple[str, SourceFile | InMemoryFile]],
    extra_files: Sequence[tuple[str, bytes]] = (),
    staged: Path | None = None,
) -> SiteManifest:
    """Write pages, extra files, the published bytes (under downloads/, with SHA256SUMS) and MARKER, then swap the folder in.

    Pages may come from a generator: each is written as it arrives, so the site never has to fit in memory; so are the
    published files, read one at a time (a records file is checked against the digest taken when it was loaded).
    With `staged` (a folder from `staging`), pages given as SiteFile were already written there (by a PageWriter in the
    process that rendered them); they are only checked off here.
    Just before the swap `out_dir` is checked again (check_out_dir, without records): a folder that is no site is never replaced.
    """
    out_dir = Path(out_dir)
    if staged is None:
        with staging(out_dir) as folder:
            return write_site(pages, out_dir, published=published, extra_files=extra_files, staged=folder)
    downloads = tuple(sorted(published, key=lambda item: item[0]))
    if any(name == SUMS for name, _ in downloads):
        raise PublicationError([Diagnostic(f"{DOWNLOADS}/{SUMS}", None, None, None, "a published file may not be called SHA256SUMS", "site.duplicate-path")])
    written = _Writer(staged, previous=out_dir if is_site(out_dir) else None)
    for page in pages:
        if isinstance(page, SiteFile):
            written.check_off(page)
        else:
            written.add(page.path, page.data)
    for path, data in extra_files:
        written.add(path, data)
    for name, file in downloads:  # a records file unchanged since the previous site is linked unread (its digest is known)
        if not written.reuse(f"{DOWNLOADS}/{name}", file.size, file.sha256):
            written.add(f"{DOWNLOADS}/{name}", file)
    written.add(f"{DOWNLOADS}/{SUMS}", sha256sums(downloads))
    written.add(MARKER, MARKER_TEXT)
    files, twice = written.files.finish()
    if twice:  # the build leaves no site; which bytes the staging folder holds at such a path does not matter
        raise PublicationError([Diagnostic(path, None, None, None, "two files would be written to the same path", "site.duplicate-path")
                                for path in twice])
    with writing(staged, "check the written downloads"):
        _verify_downloads(staged, files, written.linked)
    with writing(staged, "put the new site in place"):
        os.chmod(staged, 0o755)  # mkdtemp makes the folder private; a site is meant to be read
        swap_in(staged, check_out_dir(out_dir))
    return SiteManifest(str(out_dir), files)


def sha256sums(downloads: Sequence[tuple[str, SourceFile | InMemoryFile]]) -> bytes:
    """coreutils' format, `<hex>  <name>` sorted by name, so `sha256sum -c --strict SHA256SUMS` passes inside downloads/."""
    return "".join(f"{file.sha256}  {name}\n" for name, file in sorted(downloads, key=lambda item: item[0])).encode("utf-8")


class _Writer:
    """Writes files below one folder and keeps what was written (FileRows: a path written twice is found when finished)."""

    def __init__(self, root: Path, previous: Path | None = None):
        self.write = PageWriter(root, previous)
        self.files = FileRows()
        self.linked: set[str] = set()  # paths linked to a previous file whose bytes were hashed just now

    def reuse(self, path: str, size: int, sha256: str) -> bool:
        """Link the previous site's file at `path` if it holds exactly these bytes (PageWriter.reuse); say whether it did."""
        found = self.write.reuse(path, size, sha256)
        if found is not None:
            self.files.add(found)
            self.linked.add(path)
        return found is not None

    def add(self, path: str, data: Any) -> None:
        """Write bytes, or a published file a piece at a time (PageWriter.copy: a records file may be hundreds of megabytes)."""
        self.files.add(self.write(Page(path, data)) if type(data) is bytes else self.write.copy(path, data))

    def check_off(self, item: SiteFile) -> None:
        """Record a file written below the root elsewhere (by a PageWriter in a rendering process)."""
        self.files.add(item)


def _safe_path(path: str) -> bool:
    names = path.split("/")
    if "" not in names and "." not in names and ".." not in names and "\\" not in path:
        return True  # the common case, without pathlib: as below, every name between slashes a plain one
    parts = PurePosixPath(path).parts
    return bool(parts) and not path.startswith("/") and "\\" not in path and all(p not in ("", ".", "..") for p in parts)


def _verify_downloads(tmp: Path, files: Iterable[SiteFile], linked: Collection[str] = ()) -> None:
    """Read every download written back: the checksums the pages show were computed from these bytes before rendering (a
    linked one was hashed from the file it now is while it was linked)."""
    problems = [Diagnostic(item.path, None, None, None, "the bytes on disk differ from the bytes rendered", "site.write-mismatch")
                for item in files
                if item.path.startswith(f"{DOWNLOADS}/") and item.path not in linked and file_sha256(tmp / item.path) != item.sha256]
    if problems:
        raise PublicationError(problems)
