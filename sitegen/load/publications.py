"""The checked-in files a reader verifies a publication with: the pinned allowed_signers line, the log and past SHA256SUMS."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Mapping

from sitegen.core.errors import Diagnostic, RecordsError

ALLOWED_SIGNERS = "allowed_signers"
LOG = "publications.jsonl"
FOLDER = "publications"
_STORED = re.compile(r"^([0-9a-f]{64})\.SHA256SUMS$")


@dataclass(frozen=True)
class Publications:
    """Their bytes as read (small files: a line per key or publication, a line per published file), with their paths."""

    root: str
    allowed_signers: bytes | None = None
    log: bytes | None = None
    sums: Mapping[str, bytes] = field(default_factory=dict)  # digest in the file name -> bytes of that stored SHA256SUMS

    def path(self, name: str) -> str:
        return str(Path(self.root) / name)


def read_publications(root: Path) -> Publications:
    """Read what is there; a stored file whose name is not `<SHA-256>.SHA256SUMS` is refused, since no entry could name it."""
    root = Path(root)
    problems: list[Diagnostic] = []

    def read(path: Path) -> bytes | None:
        if path.is_symlink() or (path.exists() and not path.is_file()):
            problems.append(Diagnostic(str(path), None, None, None, "not a regular file", "publication.not-a-file"))
            return None
        return path.read_bytes() if path.is_file() else None

    signers = read(root / ALLOWED_SIGNERS)
    log = read(root / LOG)
    sums: dict[str, bytes] = {}
    folder = root / FOLDER
    if folder.is_dir():
        for path in sorted(folder.iterdir()):
            named = _STORED.match(path.name)
            if named is None:
                problems.append(Diagnostic(str(path), None, None, None, "a file in publications/ is named <SHA-256>.SHA256SUMS, "
                                           "after the SHA256SUMS it holds", "publication.unknown-file"))
                continue
            data = read(path)
            if data is not None:
                sums[named.group(1)] = data
    if problems:
        raise RecordsError(problems)
    return Publications(str(root), signers, log, sums)
