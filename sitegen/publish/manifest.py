"""What a build wrote, file by file, kept packed: the main process holds a row per file (228,000 at 10,000 case versions)."""

from __future__ import annotations

import struct
from array import array
from dataclasses import dataclass, field
from itertools import chain
from typing import Iterator

from sitegen.core.files import is_sha256_hex

# size, SHA-256, cache key, flags, then `made` (size, device, inode, modification time) and the path's length in bytes;
# the paths are kept apart, one after the other. About 150 bytes a file, where a SiteFile in a dict takes 620.
_ROW = struct.Struct("<Q32s32sBQQQqI")
_KEYED, _MADE = 1, 2
_NO_DIGEST = bytes(32)


@dataclass(frozen=True, slots=True)
class SiteFile:
    path: str  # POSIX, relative to the site root
    size: int
    sha256: str
    key: str = ""  # the page cache's key the page was made under ("" for any other file): the next build's index
    # (size, device, inode, modification time) of the file as its writer left it: the next build's index and the stamp are
    # taken from these, not from listing the site again (None: not known, and the site is listed)
    made: tuple[int, int, int, int] | None = field(default=None, compare=False)


class FileRows:
    """SiteFiles as they are written, packed in the order they come (finish: sorted, and the paths given twice)."""

    __slots__ = ("_rows", "_paths", "_ends")

    def __init__(self) -> None:
        self._rows = bytearray()
        self._paths = bytearray()
        self._ends = array("Q")  # where each path ends in _paths

    def add(self, file: SiteFile) -> None:
        """Keep `file`; its SHA-256 and key must be as hexdigest() writes them (64 lowercase hexadecimal digits, or no key)."""
        if not is_sha256_hex(file.sha256) or not (file.key == "" or is_sha256_hex(file.key)):
            raise ValueError(f"{file.path}: a digest that is not 64 lowercase hexadecimal digits")
        path = file.path.encode("utf-8", "surrogatepass")
        made = file.made
        flags = (_KEYED if file.key else 0) | (_MADE if made is not None else 0)
        self._rows += _ROW.pack(file.size, bytes.fromhex(file.sha256), bytes.fromhex(file.key) if file.key else _NO_DIGEST,
                                flags, *(made if made is not None else (0, 0, 0, 0)), len(path))
        self._paths += path
        self._ends.append(len(self._paths))

    def __len__(self) -> int:
        return len(self._ends)

    def finish(self) -> tuple[SiteFiles, tuple[str, ...]]:
        """The files sorted by path, and every path given more than once (sorted)."""
        size, rows, paths, ends = _ROW.size, self._rows, self._paths, self._ends
        names = [bytes(paths[a:b]) for a, b in zip(chain((0,), ends), ends)]
        order = sorted(range(len(names)), key=lambda i: names[i].decode("utf-8", "surrogatepass"))
        twice = sorted({names[i].decode("utf-8", "surrogatepass") for before, i in zip(order, order[1:]) if names[before] == names[i]})
        sorted_rows = b"".join(rows[i * size:(i + 1) * size] for i in order)
        return SiteFiles(sorted_rows, b"".join(names[i] for i in order)), tuple(twice)


class SiteFiles:
    """Files a build wrote, packed (FileRows.finish), read back as SiteFiles one at a time."""

    __slots__ = ("_rows", "_paths")

    def __init__(self, rows: bytes = b"", paths: bytes = b"") -> None:
        self._rows = rows
        self._paths = paths

    def __iter__(self) -> Iterator[SiteFile]:
        paths, start = self._paths, 0
        for size, sha256, key, flags, made_size, dev, ino, mtime_ns, length in _ROW.iter_unpack(self._rows):
            end = start + length
            yield SiteFile(paths[start:end].decode("utf-8", "surrogatepass"), size, sha256.hex(),
                           key.hex() if flags & _KEYED else "", (made_size, dev, ino, mtime_ns) if flags & _MADE else None)
            start = end

    def __len__(self) -> int:
        return len(self._rows) // _ROW.size

    def __eq__(self, other: object) -> bool:  # as SiteFile compares: `made` left out
        return isinstance(other, SiteFiles) and list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"SiteFiles({len(self)} files)"


@dataclass(frozen=True)
class SiteManifest:
    """What was written, so the caller can report it and tests can check it without walking the folder."""

    out_dir: str
    files: SiteFiles  # sorted by path

    def file(self, path: str) -> SiteFile:
        for item in self.files:
            if item.path == path:
                return item
        raise KeyError(path)
