"""Files by digest: a records file is read again for publishing only if its bytes are unchanged, and a cache entry is
used only if it holds its own digest."""

from __future__ import annotations

import errno
import hashlib
import os
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator, NamedTuple

from sitegen.core.errors import Diagnostic, PublicationError


CHUNK = 1 << 20  # what a file copied or hashed a piece at a time is read in


def open_regular(path: str | os.PathLike) -> BinaryIO:
    """A file opened to read in binary, refused with an OSError unless it is a regular file once open: a named pipe
    among the records or in a cache would wait for a writer for ever, and a device (a link to /dev/zero) never end.
    Opened without waiting (O_NONBLOCK, which a regular file ignores), so a pipe is refused, not waited on."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), os.fspath(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file (a named pipe, socket or device)", os.fspath(path))
    except BaseException:
        os.close(fd)
        raise
    return open(fd, "rb")


def read_regular(path: str | os.PathLike) -> bytes:
    """The bytes of a regular file, refused as open_regular says."""
    with open_regular(path) as file:
        return file.read()


@dataclass(frozen=True, slots=True)
class InMemoryFile:
    """Bytes to publish that sitegen holds itself (the schemas), with the same face as a SourceFile."""

    data: bytes

    @property
    def size(self) -> int:
        return len(self.data)

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.data).hexdigest()

    def pieces(self) -> Iterator[bytes]:
        yield self.data

    def copy_to(self, out) -> None:
        out.write(self.data)


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A records file as it was read: published copies are its exact bytes, read again and checked against this digest."""

    path: str
    sha256: str
    size: int

    @property
    def data(self) -> bytes:
        data = read_regular(self.path)
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise self._changed()
        return data

    def pieces(self) -> Iterator[bytes]:
        """The file's bytes a CHUNK at a time, checked against the digest taken when it was loaded once the last is read: the
        largest records are hundreds of megabytes, which would otherwise sit in memory beside the rest of the build. What
        a caller made of a file that changed meanwhile is the caller's to discard (a build's staged site)."""
        digest = hashlib.sha256()
        with open_regular(self.path) as source:
            while chunk := source.read(CHUNK):
                digest.update(chunk)
                yield chunk
        if digest.hexdigest() != self.sha256:
            raise self._changed()

    def copy_to(self, out) -> None:
        """Write the file's bytes to the open binary file `out` a piece at a time (pieces)."""
        for chunk in self.pieces():
            out.write(chunk)

    def _changed(self) -> PublicationError:
        return PublicationError([Diagnostic(self.path, None, None, None, "file changed while sitegen was reading the records; "
                                            "build again", "record.changed")])


def file_sha256(file) -> str:
    """The SHA-256 of a file, by its path or open in binary from where it stands to its end, read a piece at a time."""
    if isinstance(file, (str, os.PathLike)):
        with open_regular(file) as opened:
            return hashlib.file_digest(opened, "sha256").hexdigest()
    return hashlib.file_digest(file, "sha256").hexdigest()


class HeldFile(NamedTuple):
    """A file of the previous site as the last build with a cache left it: the page cache's key it was made under, its
    size and SHA-256, and the device, inode and modification time it had once that build was over (publish/siteindex.py)."""

    key: str
    size: int
    sha256: str
    dev: int
    ino: int
    mtime_ns: int


_HEX = frozenset("0123456789abcdef")


def is_sha256_hex(value: object) -> bool:
    """Whether a digest read back from a cache is one: 64 lowercase hexadecimal digits, as hexdigest() writes them."""
    return type(value) is str and len(value) == 64 and _HEX.issuperset(value)


def framed(magic: bytes, data: bytes) -> bytes:
    """A cache entry: its kind's magic line, the SHA-256 of its data, then the data, so a read can tell a damaged entry."""
    return magic + hashlib.sha256(data).hexdigest().encode("ascii") + b"\n" + data


def read_framed(path: Path, magic: bytes, *, mark_used: bool = True) -> bytes | None:
    """The data of the entry `framed` wrote at `path`, or None when it is missing, of another kind, or fails its digest.
    An entry read is marked used (prune_unused) unless the caller keeps its entries by other means (page entries:
    render/pagecache.PageCache.prune keeps them by the keys of the site's pages)."""
    try:
        with open_regular(path) as file:
            blob = file.read()
            if mark_used:
                _mark_used(file)
    except OSError:
        return None
    head = len(magic)
    if blob[:head] != magic or blob[head + 64 : head + 65] != b"\n":
        return None
    data = blob[head + 65 :]
    if hashlib.sha256(data).hexdigest().encode("ascii") != blob[head : head + 64]:
        return None
    return data


def read_framed_head(path: Path, magic: bytes, *, mark_used: bool = True) -> tuple[int, str] | None:
    """The size and SHA-256 the entry `framed` wrote at `path` claims for its data, from its head alone, or None when it is
    missing or of another kind. A claim, not a check: whatever is taken on its word must be hashed and compared. An entry
    read is marked used as read_framed says."""
    head = len(magic)
    try:
        with open_regular(path) as file:
            start = file.read(head + 65)
            size = os.fstat(file.fileno()).st_size - head - 65
            if mark_used:
                _mark_used(file)
    except OSError:
        return None
    digest = start[head : head + 64]
    if start[:head] != magic or start[head + 64 :] != b"\n" or size < 0 or not all(c in b"0123456789abcdef" for c in digest):
        return None
    return size, digest.decode("ascii")


def replace_quietly(target: Path, data: bytes) -> None:
    """Put `data` at `target` by one rename, so no reader finds half a file; a cache that cannot be written is only a
    cache, so a failure leaves nothing behind and is not an error."""
    temporary = target.with_name(f".{target.name}.{os.getpid()}")
    try:
        temporary.write_bytes(data)
        os.replace(temporary, target)
    except OSError:
        try:
            temporary.unlink()
        except OSError:
            pass


def write_new(target: Path, data: bytes) -> None:
    """Put `data` at `target`, which must not exist yet (FileExistsError, and nothing written), whole or not at all: a
    write that fails (a full disk) removes the file it made, so no half-written file is left there."""
    with open(target, "xb") as file:
        try:
            file.write(data)
            file.flush()
        except BaseException:
            os.unlink(target)
            raise


# wider than any file system's step of modification times (FAT: 2 s; Linux file systems: a tick)
TIME_STEP_NS = 2 * 10**9


def _mark_used(file) -> None:
    """Set a cache entry's modification time to now as it is read, so prune_unused knows it was used; a cache that cannot
    be written is only a cache, so a refusal is not an error."""
    try:
        os.utime(file.fileno())
    except OSError:
        pass


def prune_unused(folder: Path, *, used_since_ns: int, keep=None) -> int:
    """Delete every file below `folder` neither written (replace_quietly) nor read (read_framed, read_framed_head) since
    `used_since_ns`, less the modification times' step, except those whose name `keep` accepts; symbolic links are
    deleted as links, never followed; a file that cannot be deleted stays. Says how many went.

    What a cache keeps is what its last build used: entries of pages no longer published, or made by another version of
    sitegen, its templates or catalogs, would otherwise pile up build after build."""
    before = used_since_ns - TIME_STEP_NS
    removed = 0
    folders = [str(folder)]
    while folders:
        try:
            entries = os.scandir(folders.pop())
        except OSError:
            continue
        with entries:
            for entry in entries:
                try:
                    if entry.is_dir(follow_symlinks=False):
                        folders.append(entry.path)
                    elif not (keep is not None and keep(entry.name)) and entry.stat(follow_symlinks=False).st_mtime_ns < before:
                        os.unlink(entry.path)
                        removed += 1
                except OSError:
                    continue
    return removed
