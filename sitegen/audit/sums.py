"""SHA256SUMS as coreutils writes it, read strictly: a line that is not a checksum and a name, or a name that could
leave the downloads folder, is refused with its line, never guessed at or followed."""

from __future__ import annotations

import re
from dataclasses import dataclass

from sitegen.core.errors import Diagnostic, UnreadableError

_LINE = re.compile(r"([0-9a-f]{64}) [ *](.+)")
_CONTROL = re.compile("[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Sum:
    """One line of SHA256SUMS: the file it names (a POSIX path below the downloads folder) and its SHA-256."""

    name: str
    sha256: str
    line: int


def parse_sums(data: bytes, path: str) -> tuple[Sum, ...]:
    """Every line of SHA256SUMS; raise UnreadableError naming every line that cannot be one (so nothing is compared)."""
    problems: list[Diagnostic] = []
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data.count(b"\n", 0, error.start) + 1
        raise UnreadableError([Diagnostic(path, line, None, None, "SHA256SUMS is not UTF-8 text", "verify.sums-format")]) from None
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()  # the final newline
    sums: list[Sum] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(lines, 1):
        match = _LINE.fullmatch(line)
        if match is None:
            problems.append(Diagnostic(path, number, 1, None, "not a line of SHA256SUMS: 64 lower-case hexadecimal digits, "
                                       "two spaces and a file name", "verify.sums-format"))
            continue
        name = match.group(2)
        wrong = name_problem(name)
        if wrong is not None:
            problems.append(Diagnostic(path, number, 67, None, f"file name {name!r} {wrong}", "verify.sums-name"))
        elif name in seen:
            problems.append(Diagnostic(path, number, 67, None, f'"{name}" is listed twice (first on line {seen[name]})',
                                       "verify.sums-duplicate"))
        else:
            seen[name] = number
            sums.append(Sum(name, match.group(1), number))
    if not problems and not sums:
        problems.append(Diagnostic(path, None, None, None, "SHA256SUMS lists no file", "verify.sums-format"))
    if problems:
        raise UnreadableError(problems)
    return tuple(sums)


def name_problem(name: str) -> str | None:
    """Why a name from the publication cannot be a file below the downloads folder, or None when it can."""
    if _CONTROL.search(name):
        return "holds a control character"
    if name.startswith("/") or "\\" in name or re.match(r"[A-Za-z]:", name):
        return "is not a relative path with forward slashes"
    if any(part in ("", ".", "..") for part in name.split("/")):
        return "has an empty, . or .. part: it could name a file outside the downloads folder"
    return None
