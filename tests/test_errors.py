"""Typed errors survive the trip back from a worker process with every diagnostic intact."""

from __future__ import annotations

import pickle

import pytest

from sitegen.core.errors import CatalogError, Diagnostic, DiagnosticsError, EntryError, OutFolderError, PublicationError, RecordsError

PROBLEMS = (
    Diagnostic("records/runs.json", 3, 7, "/runs/0/date", "expected a date like 2026-09-10", "schema.format"),
    Diagnostic("en/../x.html", None, None, None, "not a safe relative path inside the site", "site.unsafe-path"),
)


@pytest.mark.parametrize("kind", [DiagnosticsError, RecordsError, PublicationError, CatalogError, OutFolderError, EntryError])
def test_a_diagnostics_error_pickles_with_its_type_and_diagnostics(kind):
    copy = pickle.loads(pickle.dumps(kind(list(PROBLEMS))))
    assert type(copy) is kind
    assert copy.diagnostics == PROBLEMS
    assert copy.lines() == kind(PROBLEMS).lines()
    assert str(copy) == "2 problem(s)"


def test_a_diagnostics_detail_is_shown_under_it_a_line_at_a_time_indented_and_escaped():
    # a difference under a diagnostic: readable line by line, and no line of it can cut or forge a diagnostic line
    found = Diagnostic("results.json", 3, 1, None, "does not reproduce", "results.stale",
                       detail="--- recorded\n+++ fresh\n-  \"passed\": 4\u202e\x1b[2K")
    assert found.format().split("\n") == [
        "results.json:3:1: error: does not reproduce [results.stale]",
        "    --- recorded",
        "    +++ fresh",
        '    -  "passed": 4\\u202e\\u001b[2K',
    ]
    assert Diagnostic("r.json", 1, 1, None, "m", "x.y").format() == "r.json:1:1: error: m [x.y]"
