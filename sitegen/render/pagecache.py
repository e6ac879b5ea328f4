"""Rendered pages kept by the digest of everything they are made from, so a rebuild renders only pages whose inputs changed.

A page's key is the SHA-256 of the render's salt (sitegen's version and source, the templates, the catalogs, the
configuration, the languages and the build date: see build.py) and of the page's own inputs: pickled (page_key), or as
digests of them taken once per run or case version (text_key, run_token), so an unchanged page costs a hash of a few
strings. Pickling is faithful, so different inputs never give the same key; equal inputs pickled differently only miss. An entry holds
its own digest and is re-checked on every read: a truncated, edited or foreign entry is not used, the page is rendered
again and the entry replaced. Nothing is read from a folder that is not marked as a cache, and nothing written there.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any, Collection

from sitegen.core.files import framed, prune_unused, read_framed, read_framed_head, replace_quietly

# The first line of a cache folder's marker file: a folder without it is never read from or written to.
MARKER = "CACHEDIR.TAG"
MARKER_TEXT = b"Signature: 8a477f597d28d172789f06886806bc55\n# A cache of pages rendered by sitegen; delete it at will.\n"
# A top-level file whose modification time says when the cache was last pruned (PageCache.prune), at most once a day.
PRUNED = "pruned"
PRUNED_TEXT = (b"sitegen deletes from this cache, at most once a day, what the build at hand did not use; this file's time "
               b"says when it last did.\n")
PRUNE_EVERY_NS = 24 * 3600 * 10**9
ENTRY_MAGIC = b"sitegen-page/1\n"
NAMES_MAGIC = b"sitegen-page-names/1\n"


def page_key(salt: bytes, *inputs: Any) -> str:
    """The digest naming a page made from `inputs` by the renderer `salt` describes."""
    buffer = io.BytesIO()
    pickler = _KeyPickler(buffer, protocol=5)
    pickler.fast = True  # no memo: equal values pickle alike whether or not they are the same object
    pickler.dump(inputs)
    digest = hashlib.sha256(salt)
    digest.update(buffer.getvalue())
    return digest.hexdigest()


def text_key(salt: bytes, *parts: str) -> str:
    """The digest naming a page made from `parts` (its language, path and the digests of its inputs, all text) by the
    renderer `salt` describes: as page_key, without pickling. Each part is prefixed by its length, so no two lists of
    parts give the same bytes, and the bytes begin unlike any pickle's, so no page_key gives them either."""
    digest = hashlib.sha256(salt)
    digest.update(b"text\0")
    for part in parts:
        data = part.encode("utf-8")
        digest.update(b"%d:" % len(data))
        digest.update(data)
    return digest.hexdigest()


def page_config(config: Any) -> Any:
    """The configuration as pages can show it: which records files are read and published (and the deny-list checked on
    them) is the loader's and the writer's business, so a run added with its own answers file keeps the other pages' keys."""
    return replace(config, answers=(), publish=(), internal_fields=())


def run_token(records: Any, results: Any, run: Any) -> str:
    """One digest of everything of a run its case-run pages are made from, taken once per run instead of pickling each
    page's observations: the run's fields, its setup and stages, the digest of its entry in the results record (its
    outcome, states, case results and observations), and the SHA-256 of every records file its answers were read from."""
    answers = records.answers
    sources = (answers.sources(run.id) if hasattr(answers, "sources")
               else {a.source for k, a in answers.items() if k[0] == run.id})
    files = tuple(sorted((source, records.files[source].sha256 if source in records.files else None) for source in sources))
    setup = records.setups.get(run.setup)
    entry = (results.digest(run.id) if hasattr(results, "digest") else page_key(b"", results[run.id])) if run.id in results else None
    return page_key(b"", "run", run, setup, records.stages(run) if setup is not None else (), entry, files)


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
                (root / PRUNED).write_bytes(PRUNED_TEXT)  # a new cache has nothing to prune for a day
            marker = root / MARKER
            usable = root.is_dir() and not marker.is_symlink() and marker.is_file() and marker.read_bytes() == MARKER_TEXT
        except OSError:
            usable = False
        return cls(root, usable)

    def forget(self, name: str) -> None:
        """Remove a file of the cache's own (the stamp, the site's index) before a build replaces the site it describes."""
        if self.usable:
            try:
                (self.root / name).unlink()
            except OSError:
                pass

    def _path(self, key: str) -> Path:
        return self.root / "pages" / key[:2] / key

    def get(self, key: str) -> bytes | None:
        """The page stored under `key`, or None when there is none or it fails its own digest."""
        if not self.usable:
            return None
        return read_framed(self._path(key), ENTRY_MAGIC, mark_used=False)  # kept by its key: prune

    def digest(self, key: str) -> tuple[int, str] | None:
        """The size and SHA-256 of the page stored under `key`, read from the entry's head alone (its body is not read):
        what a previous site's file must match to be reused without the entry. None when there is no such entry."""
        if not self.usable:
            return None
        return read_framed_head(self._path(key), ENTRY_MAGIC, mark_used=False)  # kept by its key: prune

    def put(self, key: str, data: bytes) -> None:
        """Store a page under `key` (written beside, then renamed: a reader never sees half an entry); a full disk only costs the entry."""
        if not self.usable:
            return
        target = self._path(key)
        try:
            if not target.parent.is_dir():  # a stat: most entries go into one of the 256 folders made already
                target.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(target, framed(ENTRY_MAGIC, data))

    def prune(self, pages: Collection[str], *, used_since_ns: int) -> int:
        """After a build that began at `used_since_ns`: delete what it neither used nor made, once PRUNE_EVERY_NS has passed
        since the last time (or never was), so the cache holds the current build's worth and at most a day's other
        builds' besides: at 1,000 case versions a prune after a run is added takes some 0.2 s (2,000 entries go, 23,000
        are listed), about 2% of that build, so not every build pays it.

        A page's entry stays when its key is in `pages` (the keys of the site's cached pages, many of them linked from the
        previous site without their entry being read, so reading one does not mark it: get, digest); every other entry, of any kind, stays when it was read or written
        since `used_since_ns` (core/files.prune_unused). The marker, the stamp, the site's index and PRUNED lie at the top
        and stay. Says how many entries went."""
        if not self.usable:
            return 0
        try:
            last = os.lstat(self.root / PRUNED).st_mtime_ns
        except FileNotFoundError:
            last = None  # a cache older than pruning: pruned now
        except OSError:
            return 0
        if last is not None and used_since_ns - last < PRUNE_EVERY_NS:
            return 0
        replace_quietly(self.root / PRUNED, PRUNED_TEXT)
        removed = 0
        try:
            with os.scandir(self.root) as entries:
                kinds = [entry for entry in entries if entry.is_dir(follow_symlinks=False)]
        except OSError:
            return 0
        for kind in sorted(kinds, key=lambda entry: entry.name):
            removed += prune_unused(Path(kind.path), used_since_ns=used_since_ns,
                                    keep=pages.__contains__ if kind.name == "pages" else None)
        return removed

    def names(self, key: str) -> tuple[str, ...] | None:
        """The list of page paths kept under `key` (a run's own pages), or None when there is none or it fails its digest."""
        if not self.usable:
            return None
        data = read_framed(self.root / "names" / key, NAMES_MAGIC)
        return None if data is None else tuple(data.decode("utf-8", "replace").split("\n"))

    def put_names(self, key: str, names: tuple[str, ...]) -> None:
        """Keep a list of page paths under `key`, as `put` keeps a page."""
        if not self.usable:
            return
        try:
            (self.root / "names").mkdir(exist_ok=True)
        except OSError:
            return
        replace_quietly(self.root / "names" / key, framed(NAMES_MAGIC, "\n".join(names).encode("utf-8")))


def folders_digest(*folders: Path, skip: tuple[str, ...] = ()) -> bytes:
    """One digest of every regular file below the folders (relative path and bytes, in sorted order); caches are
    bytecode, not source, and are left out, as are the folders' own sub-folders named in `skip`."""
    digest = hashlib.sha256()
    for folder in folders:
        folder = Path(folder)
        digest.update(b"folder\0" + str(folder.name).encode("utf-8") + b"\0")
        for path in sorted(p for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts
                           and p.relative_to(folder).parts[0] not in skip):
            data = path.read_bytes()
            digest.update(path.relative_to(folder).as_posix().encode("utf-8") + b"\0" + str(len(data)).encode("ascii") + b"\0")
            digest.update(data)
    return digest.digest()
