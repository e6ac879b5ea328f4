"""The files a publication is made of, by digest: a records file is read again for publishing only if its bytes are unchanged."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from pathlib import Path

from sitegen.core.errors import Diagnostic, PublicationError


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


@dataclass(frozen=True, slots=True)
class SourceFile:
    """A records file as it was read: published copies are its exact bytes, read again and checked against this digest."""

    path: str
    sha256: str
    size: int

    @property
    def data(self) -> bytes:
        data = Path(self.path).read_bytes()
        if hashlib.sha256(data).hexdigest() != self.sha256:
            raise PublicationError([Diagnostic(self.path, None, None, None, "file changed while sitegen was reading the records; "
                                               "build again", "record.changed")])
        return data
