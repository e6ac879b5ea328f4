"""Typed errors and located diagnostics; only the command line turns them into output and exit codes."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

# Control characters and line or paragraph separators, which could break a diagnostic line or forge another; and
# bidirectional controls, which could reorder what a terminal shows of it.
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


@dataclass(frozen=True, order=True)
class Diagnostic:
    """One problem at one place, printed as `path:line:col: pointer: error: message [code]`."""

    path: str
    line: int | None
    column: int | None
    pointer: str | None
    message: str
    code: str
    severity: str = "error"  # or "note": what a problem elsewhere kept from being checked
    # what shows the problem (a difference, say), printed under its line with each of its lines indented, so that no
    # line of it reads as a diagnostic of its own
    detail: str = ""

    def format(self) -> str:
        place = self.path
        if self.line is not None:
            place += f":{self.line}"
            if self.column is not None:
                place += f":{self.column}"
        if self.pointer is not None:
            place += f": {self.pointer or '/'}"
        lines = [f"{place}: {self.severity}: {self.message} [{self.code}]"]
        if self.detail:
            lines += ["    " + line for line in self.detail.split("\n")]
        return "\n".join(_UNPRINTABLE.sub(_escaped, line) for line in lines)  # a key or value from the records may hold them


def _escaped(match: re.Match) -> str:
    return f"\\u{ord(match.group(0)):04x}"


class SitegenError(Exception):
    """Base of every error sitegen raises on purpose; anything else is a bug."""

    exit_code = 1

    def lines(self) -> list[str]:
        return [f"error: {self}"]


class DiagnosticsError(SitegenError):
    """Several located problems found in one pass."""

    exit_code = 2

    def __init__(self, diagnostics: list[Diagnostic] | tuple[Diagnostic, ...]):
        self.diagnostics = tuple(diagnostics)
        super().__init__(f"{len(self.diagnostics)} problem(s)")

    def __reduce__(self):
        # raised in a worker process, it comes back pickled: rebuilt from its diagnostics, not from its message
        return type(self), (self.diagnostics,)

    def lines(self) -> list[str]:
        return [d.format() for d in self.diagnostics]


class RecordsError(DiagnosticsError):
    """The records cannot be loaded or do not agree with each other."""


class PublicationError(DiagnosticsError):
    """The records load but may not be published as they are (internal fields, stale results, unexplained changes)."""


class CatalogError(DiagnosticsError):
    """A translation catalog is missing, broken, fuzzy or incomplete."""


class OutFolderError(DiagnosticsError):
    """The path named for the site may not be replaced by one: it is or holds the records or the working folder, is a file,
    or is a folder that is not empty and was not built by sitegen."""


class EntryError(DiagnosticsError):
    """A changelog entry cannot be created as asked: an option's value would not parse, or the file already exists.
    Each problem is placed at the option (or the file) it concerns."""


class WriteError(DiagnosticsError):
    """The file system refused to take the site (disk full, read-only, no permission): placed at the path that failed.
    Not the records' fault, so exit 1 like every other failure of the environment; the previous site stays whole."""

    exit_code = 1


class UsageError(SitegenError):
    """The command was called with arguments that cannot work."""

    exit_code = 2


class CacheError(SitegenError):
    """The cache folder holds what no build of these records wrote (`build --cache`): a forged entry, not a damaged one."""

    exit_code = 2


class ServeError(SitegenError):
    """The site cannot be served: the address cannot be taken."""


def did_you_mean(key: str, candidates) -> str:
    """The closest candidate as a hint to end a message with, or nothing: a typo is then mended at a glance."""
    close = difflib.get_close_matches(key, list(candidates), n=1, cutoff=0.6)
    return f' (did you mean "{close[0]}"?)' if close else ""


class UnreadableError(DiagnosticsError):
    """A publication given to `sitegen verify` cannot be read: no such folder, no SHA256SUMS, an address that does not
    answer or redirects off its host, a file over the size limit. Nothing could be compared, so exit 2, unlike a mismatch."""
