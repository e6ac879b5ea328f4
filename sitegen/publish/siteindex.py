"""What the last build with a cache left in the site, page by page, so the next one links an unchanged page unread.

The index names, for every cached page of the site (case, case-run and run pages), the key it was made under, its size
and SHA-256, and the device, inode and modification time its file had as that build wrote or linked it (its writers
say, site.SiteFile.made: the new site is not listed again). The next build links
a page whose key is the same to the previous site's file when that file is still this one (the same device, inode, size
and modification time, no other name: publish/site.PageWriter.relink) without reading the file or the page's cache
entry; any other page is read and compared as before. An edit of a file changes its modification time, as the stamp
(stamp.py) already relies on; a file whose time is within RACY_NS of the moment the index was taken is left out, as an
edit made in that same moment could keep its time. The index is written framed with its own digest and read only when
it is well formed, for the very folder it describes; it is forgotten before a build replaces the site.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Iterable, Mapping

from sitegen.core.files import TIME_STEP_NS, HeldFile, framed, is_sha256_hex, read_framed, replace_quietly
from sitegen.render.pagecache import PageCache

INDEX = "site-index"
MAGIC = b"sitegen-site-index/1\n"
RACY_NS = TIME_STEP_NS  # an edit within a step of the index's moment could keep the time the index names


def site_stats(out: Path) -> dict[str, os.stat_result]:
    """Every file below `out` (symbolic links as they are) with its lstat, by path relative to it."""
    found: dict[str, os.stat_result] = {}
    folders = [(str(out), "")]
    while folders:  # scandir, not os.walk and relpath: a site has tens of thousands of files
        folder, prefix = folders.pop()
        try:
            entries = os.scandir(folder)
        except OSError:
            continue  # a folder that cannot be listed is passed over, as os.walk does
        with entries:
            for entry in entries:
                if entry.is_dir(follow_symlinks=False):
                    folders.append((entry.path, f"{prefix}{entry.name}/"))
                else:
                    found[prefix + entry.name] = entry.stat(follow_symlinks=False)
    return found


def held_files(written: Iterable, *, taken_ns: int) -> dict[str, HeldFile]:
    """The site's cached pages (SiteFiles with a key) as their writers left them (SiteFile.made: each a regular file written
    or linked, of the size written), modified well before `taken_ns` (the time the index is taken, after the swap). Taken
    from the writers, not from listing the site: a file edited after it was written no longer matches what the index
    says of it. Whether a file has no other name is not asked here (the previous site, deleted meanwhile, may still name
    it) but when the next build links it (site._relinked)."""
    held = {}
    for file in written:
        made = file.made
        if not file.key or made is None or made[0] != file.size or made[3] >= taken_ns - RACY_NS:
            continue
        held[file.path] = HeldFile(file.key, file.size, file.sha256, made[1], made[2], made[3])
    return held


def write_index(cache: PageCache, out: Path, held: Mapping[str, HeldFile]) -> None:
    """Keep the index of the site at `out` for the next build (written beside, then renamed)."""
    if not cache.usable:
        return
    body = {"out": str(out), "files": sorted([path, *file] for path, file in held.items())}
    replace_quietly(cache.root / INDEX, framed(MAGIC, json.dumps(body, separators=(",", ":")).encode("utf-8")))


def read_index(cache: PageCache, out: Path) -> dict[str, HeldFile]:
    """The index of the site at `out`, or nothing when there is none, it fails its digest, is not of this form or
    describes another folder."""
    if not cache.usable:
        return {}
    data = read_framed(cache.root / INDEX, MAGIC)
    if data is None:
        return {}
    try:
        body = json.loads(data)
        if type(body) is not dict or body.get("out") != str(out) or type(body.get("files")) is not list:
            return {}
        held = {}
        for row in body["files"]:
            path, key, size, sha256, dev, ino, mtime_ns = row
            if not (type(path) is str and is_sha256_hex(key) and is_sha256_hex(sha256)
                    and all(type(n) is int and n >= 0 for n in (size, dev, ino, mtime_ns))):
                return {}
            held[path] = HeldFile(key, size, sha256, dev, ino, mtime_ns)
    except (ValueError, TypeError):
        return {}
    return held


def forget_index(cache: PageCache) -> None:
    """Remove the index before a build replaces the site it describes."""
    cache.forget(INDEX)
