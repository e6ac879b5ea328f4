"""Replaces the site folder in one step, so a reader (or a build killed at any moment) never finds no site at --out.

On Linux, renameat2(RENAME_EXCHANGE) swaps the staged folder and the old site in one system call: before it the old
site is in place, after it the new one, and the old one then sits where the staged folder was until it is deleted.
Where the system or the file system cannot exchange (another kernel, EINVAL from a file system without it), the old
site is renamed aside and the new one renamed into place: a window of two renames in which --out is missing, which
the next build closes by putting the old site back before anything else.

A folder beside --out whose name a build uses (`.NAME.tmp-*` staged, `.NAME.old-*` put aside) holds a lock (flock on
the folder itself) for as long as its build uses it; one whose lock is free was left by a build that was killed, and
the next build deletes it. The lock is released by the kernel when the process dies, however it dies.
"""

from __future__ import annotations

import ctypes
import errno
import fcntl
import os
import shutil
import tempfile
from contextlib import contextmanager
from functools import partial
from pathlib import Path
from typing import Iterator

from sitegen.core.workers import each_in_threads, in_a_thread

_AT_FDCWD = -100
_RENAME_EXCHANGE = 2
# errors that say "this system or file system cannot exchange", as opposed to "this exchange failed"
_NO_EXCHANGE = {errno.ENOSYS, errno.EINVAL, errno.ENOTSUP, errno.EOPNOTSUPP}


def staged_prefix(out_dir: Path) -> str:
    return f".{out_dir.name}.tmp-"


def aside_prefix(out_dir: Path) -> str:
    return f".{out_dir.name}.old-"


@contextmanager
def locked_folder(parent: Path, prefix: str) -> Iterator[Path]:
    """A new empty folder `parent/prefix*`, locked while the block runs so that no other build sweeps it away."""
    while True:
        folder = Path(tempfile.mkdtemp(prefix=prefix, dir=parent))
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        fcntl.flock(fd, fcntl.LOCK_EX)  # waits only if another build's sweep took it in the instant after mkdtemp
        try:
            same = os.stat(folder).st_ino == os.fstat(fd).st_ino
        except FileNotFoundError:  # that sweep deleted it: make another
            same = False
        if same:
            break
        os.close(fd)
    try:
        yield folder
    finally:
        os.close(fd)


def sweep(out_dir: Path) -> tuple[Path, ...]:
    """Delete what killed builds left beside `out_dir`, after putting an old site back if --out is missing; say what went.

    Only folders with the two prefixes a build uses and no build holding their lock are touched.
    """
    out_dir = Path(out_dir)
    if not out_dir.parent.is_dir():
        return ()
    gone = []
    leftovers = sorted(p for p in out_dir.parent.iterdir()
                       if p.name.startswith((staged_prefix(out_dir), aside_prefix(out_dir))) and p.is_dir() and not p.is_symlink())
    for folder in leftovers:
        try:
            fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
        except FileNotFoundError:
            continue  # deleted meanwhile by its own build or another sweep
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue  # a build that is running uses it
            old_site = folder / "site"
            if folder.name.startswith(aside_prefix(out_dir)) and not os.path.lexists(out_dir) and old_site.is_dir():
                os.rename(old_site, out_dir)  # killed between the two renames of the fallback: the old site goes back
            shutil.rmtree(folder, ignore_errors=True)
            gone.append(folder)
        finally:
            os.close(fd)
    return tuple(gone)


def remove_tree(folder: Path, *, jobs: int = 1) -> None:
    """Delete `folder` and everything below it (symbolic links as they are, never followed), errors ignored; with jobs > 1
    its subfolders are deleted by that many threads at once (unlinking waits on the file system, not on Python).

    An old site is some 23,000 names at 1,000 case versions: deleted one after the other they take a second or more.
    """
    if jobs > 1:
        each_in_threads(partial(shutil.rmtree, ignore_errors=True), _subfolders(Path(folder), wanted=16 * jobs), jobs=jobs)
    shutil.rmtree(folder, ignore_errors=True)


@contextmanager
def removed_meanwhile(folder: Path, *, jobs: int = 1) -> Iterator[None]:
    """`folder` deleted (remove_tree, `jobs` threads) while the block runs, and gone once it is left: unlinking waits on the
    file system, so the block's own work goes on beside it."""
    with in_a_thread(partial(remove_tree, folder, jobs=jobs)):
        yield


def _subfolders(folder: Path, *, wanted: int, depth: int = 4) -> list[str]:
    """Folders below `folder` none of which holds another, level by level until there are `wanted` of them (or the
    levels run out): what remains besides them (the files of the levels above) is small."""
    level = [str(folder)]
    for _ in range(depth):
        below = []
        for path in level:
            try:
                with os.scandir(path) as entries:
                    below.extend(entry.path for entry in entries if entry.is_dir(follow_symlinks=False))
            except OSError:
                continue
        if not below:
            break
        level = below
        if len(level) >= wanted:
            break
    return level if level != [str(folder)] else []


def exchange(a: Path, b: Path) -> bool:
    """Swap two existing paths in one step (Linux renameat2 with RENAME_EXCHANGE); False where it is not available."""
    try:
        renameat2 = ctypes.CDLL(None, use_errno=True).renameat2
    except (OSError, AttributeError):  # no C library to ask, or one without renameat2 (musl before 1.2.5, macOS)
        return False
    renameat2.argtypes = (ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p, ctypes.c_uint)
    renameat2.restype = ctypes.c_int
    if renameat2(_AT_FDCWD, os.fsencode(a), _AT_FDCWD, os.fsencode(b), _RENAME_EXCHANGE) == 0:
        return True
    code = ctypes.get_errno()
    if code in _NO_EXCHANGE:
        return False
    raise OSError(code, os.strerror(code), str(b))


def swap_in(staged: Path, out_dir: Path) -> None:
    """Put `staged` at `out_dir`; the old site ends up at `staged` (exchange) or is deleted (fallback).

    The fallback puts the old site back if the second rename fails; the folder it is put aside in goes again whatever
    fails, and is kept only if even putting the old site back fails (then the next build puts it back).
    """
    if not os.path.lexists(out_dir):
        os.rename(staged, out_dir)
        return
    if exchange(staged, out_dir):
        return
    with locked_folder(out_dir.parent, aside_prefix(out_dir)) as old:
        aside = old / "site"
        try:
            os.rename(out_dir, aside)
        except BaseException:
            shutil.rmtree(old, ignore_errors=True)  # still empty: the old site never left its place
            raise
        try:
            os.rename(staged, out_dir)
        except BaseException:
            os.rename(aside, out_dir)  # should this fail, `old` holds the old site and is not deleted
            shutil.rmtree(old, ignore_errors=True)
            raise
        shutil.rmtree(old, ignore_errors=True)
