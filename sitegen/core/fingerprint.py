"""Which sitegen built a site: one digest of its package's files, the same for a checkout and an installed copy.

A reader recomputes it with stock tools (SHELL, run in the package folder): the SHA-256 of `sha256sum`'s listing of
every file, paths as `find .` prints them, sorted bytewise; bytecode caches, which Python writes as it runs, left out.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent
SHELL = "find . -type f ! -path '*/__pycache__/*' -print0 | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum"
MARK = "sitegen-source"  # the id of the element a downloads page gives the fingerprint in (downloads.html.j2), which verify reads


def tree_fingerprint(folder: Path) -> str:
    """SHELL's digest of `folder`: each file's `sha256sum` line ("<hex>  ./<path>"), sorted by path, hashed as one text."""
    folder = Path(folder)
    named = []
    for where, folders, files in os.walk(folder):  # as `find`: symbolic links neither followed nor counted as files
        folders[:] = [name for name in folders if name != "__pycache__"]
        for name in files:
            path = Path(where, name)
            if stat.S_ISREG(path.lstat().st_mode):
                named.append(("./" + path.relative_to(folder).as_posix(), path))
    named.sort(key=lambda item: item[0].encode("utf-8"))  # `LC_ALL=C sort` orders by bytes, not by code points
    listing = "".join(f"{hashlib.sha256(path.read_bytes()).hexdigest()}  {name}\n" for name, path in named)
    return hashlib.sha256(listing.encode("utf-8")).hexdigest()


def sitegen_fingerprint() -> str:
    """The fingerprint of this sitegen's own package: what a site it builds names, and what `verify` compares with."""
    return tree_fingerprint(PACKAGE)


def named_on_page(page: bytes) -> str | None:
    """The fingerprint a downloads page names, in its element with the id MARK; None when it names none."""
    found = re.search(rb'<code id="' + MARK.encode("ascii") + rb'">([0-9a-f]{64})</code>', page)
    return None if found is None else found.group(1).decode("ascii")
