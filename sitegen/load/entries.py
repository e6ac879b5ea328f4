"""Hand-written changelog entries: read strictly with located errors, and created with a header that will parse."""

from __future__ import annotations

import difflib
import itertools
import re
import unicodedata
from pathlib import Path
from urllib.parse import urlsplit

from sitegen.core.errors import Diagnostic, EntryError, RecordsError
from sitegen.core.files import read_regular, write_new
from sitegen.core.invisibles import HIDDEN, code_of
from sitegen.core.model import Entry
from sitegen.load.schemabasics import is_calendar_date

CATEGORIES = (
    "publication-rules",
    "engine-change",
    "measurement-method",
    "test-cases",
    "scoring-rules",
    "run-setup",
)
FIELDS = ("date", "category", "explains", "source")
REQUIRED_FIELDS = ("date", "category", "source")
SEPARATOR = "---"
# An entry says in a sentence or two what changed; a longer account belongs where its source links. The bound also keeps
# Markdown's inline parsing, which takes time growing with the square of a paragraph's brackets (an open "[" scans to
# the paragraph's end), under about half a second for any entry, however its text is made.
TEXT_LIMIT = 2000

# What `create_entry` writes for the maintainer to replace; the changelog refuses to publish either.
PLACEHOLDER_SENTENCE = (
    "Replace this line with one or two sentences saying what changed in the tests and why."
)
PLACEHOLDER_SOURCE = "https://example.invalid/replace-with-the-source"

_IDENTIFIER = r"[a-z0-9][a-z0-9._-]{0,79}"
_NUMBER = r"(?:0|[1-9][0-9]*)"
_EXPLAINS = re.compile(
    rf"scorer:{_NUMBER}"
    rf"|report:{_NUMBER}/runner:{_NUMBER}/run-record:{_NUMBER}"
    rf"|assessment:{_NUMBER}/policy:{_IDENTIFIER}"
)
_NAME = re.compile(_IDENTIFIER)
_HEADER = re.compile(r"([A-Za-z0-9_-]+):(?: (.*))?")
EXPLAINS_FORMS = "scorer:N, report:N/runner:N/run-record:N or assessment:N/policy:ID"


class EntryExistsError(EntryError):
    """An entry file of that name already exists; a new entry never overwrites an old one."""


def scorer_key(version: int) -> str:
    """The `explains` value for a scorer version, shared by entries and the changelog."""
    return f"scorer:{version}"


def report_key(version: int, runner: int, run_record: int) -> str:
    """The `explains` value for a report version with its runner and run-record versions."""
    return f"report:{version}/runner:{runner}/run-record:{run_record}"


def assessment_key(version: int, policy: str) -> str:
    """The `explains` value for an assessment version under its policy."""
    return f"assessment:{version}/policy:{policy}"


def check_date(value: str) -> str | None:
    """Return why `value` is not an ISO calendar date, or None when it is one."""
    if is_calendar_date(value):
        return None
    return f'date "{value}" is not an ISO date (YYYY-MM-DD)'


def check_category(value: str) -> str | None:
    """Return why `value` is not a known category, or None."""
    if value in CATEGORIES:
        return None
    close = difflib.get_close_matches(value, CATEGORIES, n=1)
    hint = f'did you mean "{close[0]}"? ' if close else ""
    return f'unknown category "{value}" ({hint}one of: {", ".join(CATEGORIES)})'


def check_explains(value: str) -> str | None:
    """Return why `value` is not an explains key, or None."""
    if _EXPLAINS.fullmatch(value):
        return None
    return f'explains "{value}" is not one of {EXPLAINS_FORMS}'


def check_source(value: str) -> str | None:
    """Return why `value` is not an https URL, or None."""
    try:
        parts = urlsplit(value)
        parts.port  # noqa: B018 (reading it checks the port: "https://host:x" is no URL)
    except ValueError:  # "https://[::1": urlsplit refuses what it cannot take apart
        parts = None
    if parts is not None and parts.scheme == "https" and parts.hostname and not re.search(r"\s", value):
        return None
    return f'source "{value}" is not an https URL'


_CHECKS = {
    "date": (check_date, "entry.bad-date"),
    "category": (check_category, "entry.unknown-category"),
    "explains": (check_explains, "entry.bad-explains"),
    "source": (check_source, "entry.bad-source"),
}


def parse_entry(path: str, text: str) -> Entry:
    """Read one entry, reporting every header problem with its line so the publisher can fix them all at once."""
    problems: list[Diagnostic] = []

    def problem(line: int | None, column: int | None, message: str, code: str) -> None:
        problems.append(Diagnostic(path, line, column, None, message, code))

    lines = [line.removesuffix("\r") for line in text.removeprefix("\ufeff").split("\n")]
    for number, line in enumerate(lines, start=1):
        for hidden in HIDDEN.finditer(line):
            char = hidden.group(0)
            name = unicodedata.name(char, "a control character" if unicodedata.category(char) == "Cc" else "a noncharacter")
            problem(number, hidden.start() + 1, f"character {code_of(char)} ({name}) may not be in a changelog entry: it is "
                    "invisible or reorders the text around it, and the feed's XML cannot carry every such character; "
                    "remove it", "entry.hidden-character")
    try:
        end = lines.index(SEPARATOR)
        header = lines[:end]
    except ValueError:
        # Without a separator the header ends at the first line that is not one; the rest is not checked.
        end = None
        header = list(itertools.takewhile(lambda line: not line.strip() or _HEADER.fullmatch(line), lines))
        last = min(len(header) + 1, max(1, len(lines) - (1 if lines[-1] == "" else 0)))
        problem(last, None, f'the header is not closed by a line "{SEPARATOR}"', "entry.no-separator")

    values: dict[str, str] = {}
    seen: dict[str, int] = {}
    for number, line in enumerate(header, start=1):
        if not line.strip():
            continue  # blank lines in the header carry nothing
        match = _HEADER.fullmatch(line)
        if match is None:
            problem(number, 1, f'expected a header line "key: value", found "{line}"', "entry.header-syntax")
            continue
        key, value = match.group(1), (match.group(2) or "").strip()
        if key not in FIELDS:
            close = difflib.get_close_matches(key, FIELDS, n=1, cutoff=0.7)
            hint = f'did you mean "{close[0]}"? ' if close else ""
            problem(number, 1, f'unknown header field "{key}" ({hint}known: {", ".join(FIELDS)})',
                    "entry.unknown-field")
            continue
        if key in seen:
            problem(number, 1, f'header field "{key}" repeated (first on line {seen[key]})',
                    "entry.duplicate-field")
            continue
        seen[key] = number
        check, code = _CHECKS[key]
        reason = check(value)
        if reason is not None:
            problem(number, len(key) + 3, reason, code)
            continue
        values[key] = value

    if end is not None:
        for key in REQUIRED_FIELDS:
            if key not in seen:
                problem(end + 1, None, f'header field "{key}" is missing', "entry.missing-field")
        body = "\n".join(lines[end + 1:]).strip()
        if not body:
            problem(end + 1, None, f'the entry has no text after the "{SEPARATOR}" line', "entry.empty-body")
        elif len(body) > TEXT_LIMIT:
            first = next(number for number in range(end + 2, len(lines) + 1) if lines[number - 1].strip())
            problem(first, None, f"the entry's text has {len(body):,} characters, more than the {TEXT_LIMIT:,} an entry may "
                    "have: say in a sentence or two what changed, and link a longer account as its source", "entry.too-long")
    else:
        body = ""

    if problems:
        raise RecordsError(sorted(problems, key=_diagnostic_order))
    return Entry(
        path=path,
        date=values["date"],
        category=values["category"],
        explains=values.get("explains"),
        source=values["source"],
        body=body + "\n",
        explains_line=seen.get("explains"),
    )


def load_entries(folder: Path) -> tuple[Entry, ...]:
    """Read every `*.md` entry in `folder`, sorted by file name, failing once with all problems of all files."""
    if not folder.is_dir():
        return ()
    entries: list[Entry] = []
    problems: list[Diagnostic] = []
    for file in sorted(p for p in folder.iterdir() if p.suffix == ".md"):
        path = str(file)
        if not file.is_file():  # a folder, pipe, socket or device by an entry's name is named, never skipped unsaid
            problems.append(Diagnostic(path, None, None, None, "not a regular file: an entry is a Markdown file",
                                       "entry.not-a-file"))
            continue
        bad_name = _check_name(file.stem)
        if bad_name is not None:
            problems.append(Diagnostic(path, None, None, None, bad_name, "entry.bad-name"))
            continue
        try:
            data = read_regular(file)
        except OSError as error:  # replaced by a pipe or device since it was listed, or unreadable
            problems.append(Diagnostic(path, None, None, None, f"cannot read file: {error.strerror or error}", "entry.unreadable"))
            continue
        try:
            text = data.decode("utf-8")
        except UnicodeDecodeError as error:
            line = data.count(b"\n", 0, error.start) + 1
            column = len(data[data.rfind(b"\n", 0, error.start) + 1 : error.start].decode("utf-8", "replace")) + 1
            problems.append(Diagnostic(path, line, column, None, "file is not valid UTF-8", "entry.encoding"))
            continue
        try:
            entries.append(parse_entry(path, text))
        except RecordsError as error:
            problems.extend(error.diagnostics)
    if problems:
        raise RecordsError(sorted(problems, key=_diagnostic_order))
    return tuple(entries)


def slug_for(explains: str | None, category: str) -> str:
    """A file-name slug that says what the entry is about: the change it explains, else its category."""
    if explains is None:
        return category
    return re.sub(r"[:/]+", "-", explains)


def render_entry(*, category: str, explains: str | None, date: str, source: str | None) -> str:
    """The text of a new entry: a header that parses and a placeholder line to replace."""
    header = [f"date: {date}", f"category: {category}"]
    if explains is not None:
        header.append(f"explains: {explains}")
    header.append(f"source: {source if source is not None else PLACEHOLDER_SOURCE}")
    return "\n".join(header) + f"\n{SEPARATOR}\n{PLACEHOLDER_SENTENCE}\n"


def create_entry(
    folder: Path,
    *,
    category: str,
    explains: str | None,
    date: str,
    source: str | None = None,
    slug: str | None = None,
) -> Path:
    """Write `<date>-<slug>.md` for the maintainer to complete, never replacing an existing entry.

    Refuses (EntryError) values the entry would not parse with, each placed at the `sitegen entry new` option that
    gave it and coded as the changelog codes that problem in an entry's header, and an existing file (EntryExistsError).
    """
    stem = f"{date}-{slug if slug is not None else slug_for(explains, category)}"
    named_by = "--slug" if slug is not None else "--explains"  # a category always makes a safe name
    unsafe = _unsafe_name(stem, date=date, explains=explains, slug=slug)
    problems = [problem for problem in (
        _refused_value("--category", "category", category),
        _refused_value("--explains", "explains", explains),
        _refused_value("--date", "date", date),
        _refused_value("--source", "source", source),
        Diagnostic(named_by, None, None, None, unsafe, "entry.bad-name") if unsafe is not None else None,
        _refused_folder(folder),
    ) if problem is not None]
    if problems:
        raise EntryError(problems)
    folder.mkdir(exist_ok=True)
    target = folder / f"{stem}.md"
    text = render_entry(category=category, explains=explains, date=date, source=source)
    try:
        write_new(target, text.encode("utf-8"))
    except FileExistsError:
        raise EntryExistsError([Diagnostic(str(target), None, None, None,
                                           "an entry of that name already exists; edit it, or name another with --slug",
                                           "entry.exists")]) from None
    return target


def _refused_folder(folder: Path) -> Diagnostic | None:
    """Why the entry cannot go into `folder`, the changelog folder of the records: the records folder is not there (a
    mistyped --records is refused, never made), or something other than a folder has the changelog's name."""
    if not folder.parent.is_dir():
        said = "what is there is not a folder" if folder.parent.exists() else "nothing is there"
        return Diagnostic("--records", None, None, None, f'no records folder at "{folder.parent}": {said}', "entry.no-records")
    if folder.exists() and not folder.is_dir():
        return Diagnostic(str(folder), None, None, None, "not a folder: the changelog folder of the records holds the entries",
                          "entry.not-a-folder")
    return None


def _refused_value(option: str, field: str, value: str | None) -> Diagnostic | None:
    """Why `value`, given with `option`, would not parse as the header field `field`, coded as the changelog codes it."""
    check, code = _CHECKS[field]
    reason = check(value) if value is not None else None
    return None if reason is None else Diagnostic(option, None, None, None, reason, code)


def _unsafe_name(stem: str, *, date: str, explains: str | None, slug: str | None) -> str | None:
    """Why a new entry's file name is unsafe, unless that only follows from a bad --date or --explains already reported."""
    if check_date(date) is not None or (slug is None and explains is not None and check_explains(explains) is not None):
        return None
    return _check_name(stem)


def _check_name(stem: str) -> str | None:
    if _NAME.fullmatch(stem):
        return None
    return f'file name "{stem}.md" is not a safe identifier ({_IDENTIFIER} before ".md")'


def _diagnostic_order(d: Diagnostic) -> tuple:
    return (d.path, d.line or 0, d.column or 0, d.code, d.message)
