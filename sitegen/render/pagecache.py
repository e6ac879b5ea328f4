"""Rendered pages kept by the digest of everything they are made from, so a rebuild renders only pages whose inputs changed.

A page's key is the SHA-256 of the render's salt (sitegen's version and source, the templates, the catalogs, the
configuration, the languages and the build date: see build.py) and of the page's own inputs, pickled. Pickling is
faithful, so different inputs never give the same key; equal inputs pickled differently only miss. An entry holds
its own digest and is re-checked on every read: a truncated, edited or foreign entry is not used, the page is rendered
again and the entry replaced. Nothing is read from a folder that is not marked as a cache, and nothing written there.
"""

from __future__ import annotations

import hashlib
import io
import pickle
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from sitegen.core.files import framed, read_framed, replace_quietly

# The first line of a cache folder's marker file: a folder without it is never read from or written to.
MARKER = "CACHEDIR.TAG"
MARKER_TEXT = b"Signature: 8a477f597d28d172789f06886806bc55\n# A cache of pages rendered by sitegen; delete it at will.\n"
ENTRY_MAGIC = b"sitegen-page/1\n"


def page_key(salt: bytes, *inputs: Any) -> str:
    """The digest naming a page made from `inputs` by the renderer `salt` describes."""
    buffer = io.BytesIO()
    pickler = _KeyPickler(buffer, protocol=5)
    pickler.fast = True  # no memo: equal values pickle alike whether or not they are the same object
    pickler.dump(inputs)
    digest = hashlib.sha256(salt)
    digest.update(buffer.getvalue())
    return digest.hexdigest()


def page_config(config: Any) -> Any:
    """The configuration as pages can show it: which records files are read and published (and the deny-list checked on
    them) is the loader's and the writer's business, so a run added with its own answers file keeps the other pages' keys."""
    return replace(config, answers=(), publish=(), internal_fields=())


def answer_token(records: Any, key: tuple[str, str, int]) -> tuple | None:
    """What names an answer in a page's key without unpacking it: the SHA-256 of the records file it was read from (the
    answer is made from those bytes alone, by the loader in the salt) and where it is in that file, or None when absent."""
    answers = records.answers
    source = answers.source(key) if hasattr(answers, "source") else (answers[key].source if key in answers else None)
    if source is None:
        return None
    file = records.files.get(source)
    return ("answer", source, file.sha256 if file is not None else None, *key)


class _KeyPickler(pickle.Pickler):
    """Pickles the records' read-only mappings as the mappings they show (only for keys: never loaded again)."""

    def reducer_override(self, obj: Any) -> Any:
        if type(obj) is MappingProxyType:
            return (_read_only, (tuple(obj.items()),))
        return NotImplemented


def _read_only(items: tuple) -> Any:
    """What a pickled read-only mapping names as its maker (keys are never unpickled; this is for completeness)."""
    return MappingProxyType(dict(items))


@dataclass(frozen=True)
class PageCache:
    """A folder of rendered pages by key; `usable` is False for a folder that is not a sitegen cache (it is left alone)."""

    root: Path
    usable: bool

    @classmethod
    def open(cls, root: Path) -> "PageCache":
        """The cache at `root`, made when the folder is missing or empty; an unmarked folder with anything in it is not used."""
        root = Path(root)
        try:
            if not root.exists() or (root.is_dir() and not any(root.iterdir())):
                root.mkdir(parents=True, exist_ok=True)
                (root / MARKER).write_bytes(MARKER_TEXT)
            marker = root / MARKER
            usable = root.is_dir() and not marker.is_symlink() and marker.is_file() and marker.read_bytes() == MARKER_TEXT
        except OSError:
            usable = False
        return cls(root, usable)

    def _path(self, key: str) -> Path:
        return self.root / "pages" / key[:2] / key

    def get(self, key: str) -> bytes | None:
        """The page stored under `key`, or None when there is none or it fails its own digest."""
        if not self.usable:
            return None
        return read_framed(self._path(key), ENTRY_MAGIC)

    def put(self, key: str, data: bytes) -> None:
        """Store a page under `key` (written beside, then renamed: a reader never sees half an entry); a full disk only costs the entry."""
        if not self.usable:
            return
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(target, framed(ENTRY_MAGIC, data))


def folders_digest(*folders: Path) -> bytes:
    """One digest of every regular file below the folders (relative path and bytes, in sorted order); caches are
    bytecode, not source, and are left out."""
    digest = hashlib.sha256()
    for folder in folders:
        folder = Path(folder)
        digest.update(b"folder\0" + str(folder.name).encode("utf-8") + b"\0")
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
            data = path.read_bytes()
            digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
            digest.update(data)
    return digest.digest()
