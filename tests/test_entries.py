"""Hand-written changelog entries: strict header parsing, located errors, and `entry new` round trips."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from sitegen.load.entries import (
    CATEGORIES,
    PLACEHOLDER_SENTENCE,
    PLACEHOLDER_SOURCE,
    TEXT_LIMIT,
    EntryExistsError,
    create_entry,
    load_entries,
    parse_entry,
)
from sitegen.cli import main
from sitegen.core.errors import EntryError, RecordsError, SitegenError
from sitegen.core.model import Entry

DATA = Path(__file__).parent / "data" / "changelog"
SOURCE = "https://github.com/example/granska-quality/pull/41"


def problems(path: str, text: str) -> list[tuple[int | None, int | None, str, str]]:
    with pytest.raises(RecordsError) as caught:
        parse_entry(path, text)
    assert all(d.path == path for d in caught.value.diagnostics)
    return [(d.line, d.column, d.code, d.message) for d in caught.value.diagnostics]


def test_parse_entry_reads_every_field():
    text = (
        "date: 2026-08-20\n"
        "category: measurement-method\n"
        "explains: report:5/runner:3/run-record:5\n"
        f"source: {SOURCE}\n"
        "---\n"
        "The run record changed.\n\nSecond paragraph.\n"
    )
    entry = parse_entry("changelog/x.md", text)
    assert entry == Entry(
        path="changelog/x.md",
        date="2026-08-20",
        category="measurement-method",
        explains="report:5/runner:3/run-record:5",
        source=SOURCE,
        body="The run record changed.\n\nSecond paragraph.\n",
        explains_line=3,
    )


@pytest.mark.parametrize("explains", [
    "scorer:7",
    "scorer:10",
    "report:5/runner:2/run-record:4",
    "assessment:1/policy:short-case-v1",
])
def test_parse_entry_accepts_each_explains_form(explains):
    text = f"date: 2026-08-20\ncategory: scoring-rules\nexplains: {explains}\nsource: {SOURCE}\n---\nWhy.\n"
    assert parse_entry("e.md", text).explains == explains


@pytest.mark.parametrize("explains", [
    "scorer:v7", "scorer:07", "scorer 7", "report:5", "report:5/runner:2/run_record:4",
    "assessment:1", "assessment:1/policy:Short", "suite:1",
])
def test_parse_entry_refuses_other_explains(explains):
    text = f"date: 2026-08-20\ncategory: scoring-rules\nexplains: {explains}\nsource: {SOURCE}\n---\nWhy.\n"
    [(line, column, code, message)] = problems("e.md", text)
    assert (line, column, code) == (3, 11, "entry.bad-explains")
    assert message == (f'explains "{explains}" is not one of scorer:N, report:N/runner:N/run-record:N '
                       "or assessment:N/policy:ID")


def test_unknown_field_suggests_a_close_name():
    text = f"date: 2026-08-20\ncategory: test-cases\nexplain: scorer:6\nsource: {SOURCE}\n---\nWhy.\n"
    assert problems("e.md", text) == [
        (3, 1, "entry.unknown-field",
         'unknown header field "explain" (did you mean "explains"? known: date, category, explains, source)'),
    ]


def test_header_line_without_colon_is_a_syntax_error():
    text = f"date: 2026-08-20\ncategory test-cases\nsource: {SOURCE}\n---\nWhy.\n"
    assert problems("e.md", text) == [
        (2, 1, "entry.header-syntax", 'expected a header line "key: value", found "category test-cases"'),
        (4, None, "entry.missing-field", 'header field "category" is missing'),
    ]


def test_parse_entry_accepts_crlf_and_a_byte_order_mark():
    text = f"\ufeffdate: 2026-08-20\r\ncategory: test-cases\r\nsource: {SOURCE}\r\n---\r\nBody.\r\n"
    entry = parse_entry("e.md", text)
    assert (entry.date, entry.category, entry.body) == ("2026-08-20", "test-cases", "Body.\n")


# One fixture per error kind, each with the exact diagnostics it must produce (line, column, code, message).
FIXTURES = {
    "unknown-category.md": [
        (2, 11, "entry.unknown-category",
         'unknown category "measurement" (did you mean "measurement-method"? one of: publication-rules, '
         "engine-change, measurement-method, test-cases, scoring-rules, run-setup)"),
    ],
    "bad-date.md": [(1, 7, "entry.bad-date", 'date "2026-02-30" is not an ISO date (YYYY-MM-DD)')],
    "missing-source.md": [(3, None, "entry.missing-field", 'header field "source" is missing')],
    "unknown-field.md": [
        (3, 1, "entry.unknown-field",
         'unknown header field "autor" (known: date, category, explains, source)'),
    ],
    "duplicate-field.md": [(4, 1, "entry.duplicate-field", 'header field "date" repeated (first on line 1)')],
    "http-source.md": [
        (3, 9, "entry.bad-source",
         'source "http://github.com/example/granska-quality/pull/41" is not an https URL'),
    ],
    "bad-explains.md": [
        (3, 11, "entry.bad-explains",
         'explains "scorer:v7" is not one of scorer:N, report:N/runner:N/run-record:N or assessment:N/policy:ID'),
    ],
    "no-separator.md": [(4, None, "entry.no-separator", 'the header is not closed by a line "---"')],
    "empty-body.md": [(4, None, "entry.empty-body", 'the entry has no text after the "---" line')],
    "several-problems.md": [
        (1, 7, "entry.bad-date", 'date "20 August 2026" is not an ISO date (YYYY-MM-DD)'),
        (2, 11, "entry.unknown-category",
         'unknown category "tests" (did you mean "test-cases"? one of: publication-rules, engine-change, '
         "measurement-method, test-cases, scoring-rules, run-setup)"),
        (3, 9, "entry.bad-source", 'source "ftp://example.org/x" is not an https URL'),
    ],
}


@pytest.mark.parametrize("name", sorted(FIXTURES))
def test_each_header_error_has_its_exact_diagnostic(name):
    path = str(DATA / "invalid" / name)
    text = (DATA / "invalid" / name).read_text(encoding="utf-8")
    found = problems(path, text)
    assert sorted(found, key=lambda p: (p[0] or 0, p[1] or 0, p[2])) == FIXTURES[name]


def test_every_invalid_fixture_is_covered():
    assert sorted(p.name for p in (DATA / "invalid").iterdir()) == sorted(FIXTURES)


def test_an_entry_of_a_sentence_or_two_is_read_and_one_longer_than_the_limit_is_refused_at_its_text():
    header = f"date: 2026-08-20\ncategory: test-cases\nsource: {SOURCE}\n---\n\n"
    assert parse_entry("e.md", header + "x" * TEXT_LIMIT + "\n").body == "x" * TEXT_LIMIT + "\n"
    assert problems("e.md", header + "x" * (TEXT_LIMIT + 1) + "\n") == [
        (6, None, "entry.too-long", "the entry's text has 2,001 characters, more than the 2,000 an entry may have: say in a "
                                    "sentence or two what changed, and link a longer account as its source")]


def test_an_entry_made_to_stall_the_markdown_parser_is_refused_before_it_is_rendered(tmp_path, capsys):
    # an open "[" makes Markdown scan to the paragraph's end, so 50,000 of them took minutes to render: the entry is
    # refused at its file and line, exit 2, nothing written
    records = tmp_path / "records"
    shutil.copytree(Path(__file__).parent.parent / "records", records)
    stall = records / "changelog" / "2026-08-21-brackets.md"
    stall.write_text(f"date: 2026-08-21\ncategory: test-cases\nsource: {SOURCE}\n---\n" + "[" * 50_000 + "\n", encoding="utf-8")
    assert main(["build", "--records", str(records), "--out", str(tmp_path / "site"), "--quiet"]) == 2
    err = capsys.readouterr().err
    assert f"{stall}:5: error: the entry's text has 50,000 characters" in err and "[entry.too-long]" in err
    assert "Traceback" not in err and not (tmp_path / "site").exists()


def test_diagnostic_formats_with_file_and_line():
    path = str(DATA / "invalid" / "bad-date.md")
    with pytest.raises(RecordsError) as caught:
        parse_entry(path, (DATA / "invalid" / "bad-date.md").read_text(encoding="utf-8"))
    assert caught.value.lines() == [
        f'{path}:1:7: error: date "2026-02-30" is not an ISO date (YYYY-MM-DD) [entry.bad-date]'
    ]


def test_load_entries_sorts_by_file_name():
    entries = load_entries(DATA / "valid")
    assert [Path(e.path).name for e in entries] == ["2026-08-01-public-in-full.md", "2026-08-20-scorer-6.md"]
    assert entries[1].explains == "scorer:6"


def test_load_entries_collects_the_problems_of_every_file(tmp_path):
    for name in ("bad-date.md", "http-source.md", "unknown-field.md"):
        shutil.copy(DATA / "invalid" / name, tmp_path / name)
    shutil.copy(DATA / "valid" / "2026-08-01-public-in-full.md", tmp_path)
    (tmp_path / "notes.txt").write_text("not an entry", encoding="utf-8")
    with pytest.raises(RecordsError) as caught:
        load_entries(tmp_path)
    assert [(Path(d.path).name, d.code) for d in caught.value.diagnostics] == [
        ("bad-date.md", "entry.bad-date"),
        ("http-source.md", "entry.bad-source"),
        ("unknown-field.md", "entry.unknown-field"),
    ]


def test_load_entries_refuses_unsafe_names_and_bad_encoding(tmp_path):
    (tmp_path / "Upper Case.md").write_text(f"date: 2026-08-20\ncategory: test-cases\nsource: {SOURCE}\n---\nx\n")
    (tmp_path / "latin1.md").write_bytes(b"date: 2026-08-20\ncategory: test-cases\nsource: https://a.b/\n---\n\xe5\n")
    with pytest.raises(RecordsError) as caught:
        load_entries(tmp_path)
    assert sorted((Path(d.path).name, d.code) for d in caught.value.diagnostics) == [
        ("Upper Case.md", "entry.bad-name"),
        ("latin1.md", "entry.encoding"),
    ]


def test_load_entries_names_what_is_not_a_regular_file_instead_of_skipping_it(tmp_path):
    """A pipe by an entry's name was skipped without a word, so the entry a maintainer meant to add was missing from the
    changelog; a pipe is never opened (that would wait for a writer for ever), it is named, with every other problem."""
    os.mkfifo(tmp_path / "2026-08-20-a-pipe.md")
    (tmp_path / "2026-08-21-a-folder.md").mkdir()
    (tmp_path / "2026-08-22-a-device.md").symlink_to("/dev/zero")
    (tmp_path / "latin1.md").write_bytes(b"date: 2026-08-20\ncategory: test-cases\nsource: https://a.b/\n---\n\xe5\n")
    with pytest.raises(RecordsError) as caught:
        load_entries(tmp_path)
    assert sorted((Path(d.path).name, d.code) for d in caught.value.diagnostics) == [
        ("2026-08-20-a-pipe.md", "entry.not-a-file"),
        ("2026-08-21-a-folder.md", "entry.not-a-file"),
        ("2026-08-22-a-device.md", "entry.not-a-file"),
        ("latin1.md", "entry.encoding"),
    ]


def test_load_entries_of_a_missing_folder_is_empty(tmp_path):
    assert load_entries(tmp_path / "changelog") == ()


@pytest.mark.parametrize("explains, name", [
    ("scorer:7", "2026-10-01-scorer-7.md"),
    ("report:5/runner:3/run-record:5", "2026-10-01-report-5-runner-3-run-record-5.md"),
    ("assessment:2/policy:short-case-v2", "2026-10-01-assessment-2-policy-short-case-v2.md"),
    (None, "2026-10-01-measurement-method.md"),
])
def test_create_entry_round_trips_through_parse_entry(tmp_path, explains, name):
    path = create_entry(tmp_path / "changelog", category="measurement-method", explains=explains,
                        date="2026-10-01", source=SOURCE)
    assert path == tmp_path / "changelog" / name
    entry = parse_entry(str(path), path.read_text(encoding="utf-8"))
    assert (entry.date, entry.category, entry.explains, entry.source) == (
        "2026-10-01", "measurement-method", explains, SOURCE)
    assert entry.body.strip() == PLACEHOLDER_SENTENCE
    assert load_entries(tmp_path / "changelog") == (entry,)


def test_create_entry_without_source_writes_a_placeholder_that_parses(tmp_path):
    path = create_entry(tmp_path, category="test-cases", explains=None, date="2026-10-01", slug="blind-reading")
    assert path.name == "2026-10-01-blind-reading.md"
    assert parse_entry(str(path), path.read_text(encoding="utf-8")).source == PLACEHOLDER_SOURCE


def test_create_entry_refuses_to_overwrite(tmp_path):
    path = create_entry(tmp_path, category="scoring-rules", explains="scorer:7", date="2026-10-01", source=SOURCE)
    path.write_text(path.read_text(encoding="utf-8").replace(PLACEHOLDER_SENTENCE, "Maintainer's text."))
    before = path.read_bytes()
    with pytest.raises(EntryExistsError) as caught:
        create_entry(tmp_path, category="scoring-rules", explains="scorer:7", date="2026-10-01", source=SOURCE)
    assert isinstance(caught.value, SitegenError) and caught.value.exit_code == 2, "an existing file is bad input"
    (problem,) = caught.value.diagnostics
    assert (problem.path, problem.code) == (str(path), "entry.exists") and "--slug" in problem.message
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [path.name], "nothing else is left in the folder"


_WRITE_WITH_A_SIZE_LIMIT = r"""
import resource, signal, sys
from pathlib import Path
from sitegen.load.entries import create_entry
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit then fails (EFBIG) as on a full disk
resource.setrlimit(resource.RLIMIT_FSIZE, (16, 16))  # no file may grow past 16 bytes: an entry is longer
try:
    create_entry(Path(sys.argv[1]), category="test-cases", explains=None, date="2026-10-01", slug="full-disk")
except OSError as error:
    print(error.strerror)
"""


def test_a_new_entry_that_cannot_be_written_leaves_nothing_half_written(tmp_path):
    """A half-written entry would stop the next build at its header: when the disk cannot take it (here a file size
    limit, in a child process) there is no entry at all, and no temporary file either."""
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _WRITE_WITH_A_SIZE_LIMIT, str(tmp_path)], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "File too large", (done.stdout, done.stderr)
    assert list(tmp_path.iterdir()) == [], "neither the entry nor a temporary file is left"


@pytest.mark.parametrize("arguments, place, code, fragment", [
    ({"category": "measurement"}, "--category", "entry.unknown-category", 'unknown category "measurement"'),
    ({"explains": "scorer:seven"}, "--explains", "entry.bad-explains", 'explains "scorer:seven" is not one of'),
    ({"date": "2026-13-01"}, "--date", "entry.bad-date", 'date "2026-13-01" is not an ISO date'),
    ({"date": "2026/10/01"}, "--date", "entry.bad-date", 'date "2026/10/01" is not an ISO date'),
    ({"source": "http://example.org/"}, "--source", "entry.bad-source", 'source "http://example.org/" is not an https URL'),
    ({"slug": "../escape"}, "--slug", "entry.bad-name", 'file name "2026-10-01-../escape.md" is not a safe identifier'),
])
def test_create_entry_refuses_arguments_that_would_not_parse(tmp_path, arguments, place, code, fragment):
    """Each problem once, placed at its option and coded as the changelog codes it in an entry's header."""
    base = {"category": "test-cases", "explains": None, "date": "2026-10-01", "source": SOURCE}
    with pytest.raises(EntryError) as caught:
        create_entry(tmp_path, **(base | arguments))
    assert caught.value.exit_code == 2
    (problem,) = caught.value.diagnostics
    assert (problem.path, problem.code) == (place, code) and fragment in problem.message
    assert problem.format() == f"{place}: error: {problem.message} [{code}]"
    assert list(tmp_path.iterdir()) == []


def test_create_entry_reports_every_bad_argument_at_once(tmp_path):
    with pytest.raises(EntryError) as caught:
        create_entry(tmp_path, category="x", explains="bad", date="2026-13-01", source="http://example.org/")
    assert [(d.path, d.code) for d in caught.value.diagnostics] == [
        ("--category", "entry.unknown-category"), ("--explains", "entry.bad-explains"),
        ("--date", "entry.bad-date"), ("--source", "entry.bad-source")]


def test_categories_are_the_documented_six():
    assert set(CATEGORIES) == {"publication-rules", "engine-change", "measurement-method", "test-cases",
                               "scoring-rules", "run-setup"}
