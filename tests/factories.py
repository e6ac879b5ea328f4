"""Small builders for records in tests, so each test states only what its rule is about."""

from __future__ import annotations

from types import MappingProxyType

from sitegen.core import model as m
from sitegen.load.setups import canonical_configuration, fingerprint

DOCUMENT = "\n".join([
    "Inspektionsanteckning 2026-03-14",
    "Objekt: Pumpstation Norra, Kalmar kommun.",
    "Vid besöket konstaterades ett läckage vid ventil V3.",
    "Läckan är åtgärdad. Åtgärden utfördes av driftpersonalen samma dag.",
    "Provet togs ur kranen i pumphallen.",
    "Plomberna undersöktes.",
    "Anteckningen upprättad av inspektör A. Berg.",
])


def json_paths(value, prefix=()):
    """Every place in a parsed JSON value, as a tuple of keys and indexes (the root first)."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from json_paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from json_paths(item, prefix + (index,))


def passage(quote=None, lines=None, document=DOCUMENT):
    """A resolved passage: lines follow from the quote when not given."""
    from sitegen.core.text import DocumentText

    if lines is None:
        (lines,) = DocumentText(document).occurrences(quote)
    return m.Passage(quote, tuple(lines))


def expected(id="e1", kind="flaw", rules=("R-1",), missing=True, quote="Läckan är åtgärdad.", lines=None, reviewer_expected=True,
             no_passage=False, document=DOCUMENT):
    p = None if no_passage else passage(quote, lines, document)
    return m.KeyFinding(id, kind, tuple(rules), missing, p, reviewer_expected)


def finding(id="f1", kind="flaw", rule="R-1", missing=True, quote="Läckan är åtgärdad.", location=None, supporting=(), trace=(),
            wording="Det framgår inte vem som kontrollerade åtgärden."):
    return m.Finding(id, kind, rule, tuple(supporting), missing, quote, tuple(location) if location else None, wording, tuple(trace))


def case_version(id="cv", *, expected_findings=(), prohibited=(), voluntary=(), document=DOCUMENT, rules=("R-1", "R-2"), case=None):
    return m.CaseVersion(
        id=id, case=case or id, variant=None, title=f"Case {id}", document_type="inspection-note", document=document,
        rules=tuple(m.Rule(r, f"Rule {r}", f"Text of {r}") for r in rules),
        key=m.Key(tuple(expected_findings), tuple(prohibited), tuple(voluntary)),
    )


def engine(reviewer_findings=(), report=None, status="completed", reviewers=None, corrections=()):
    if reviewers is None:
        reviewers = (m.Reviewer("reviewer-1", tuple(reviewer_findings)),)
    return m.EngineAnswer(status, tuple(reviewers), tuple(corrections), None if report is None else tuple(report))


def records(case_versions, answers, *, merge=False, repetitions=1, pairs=(), runs=None, status="completed", scorer=6):
    """Records of one suite; answers maps (case version id, repetition) -> (EngineAnswer, rerun or None)."""
    configuration = {"engine": "test", "merge": merge}
    setup = m.Setup("setup", canonical_configuration(configuration), fingerprint(configuration), merge)
    suite = m.Suite("suite", 1, "Suite", tuple(cv.id for cv in case_versions))
    if runs is None:
        runs = (m.Run("run", "2026-01-01", "setup", "suite", 1, scorer, m.MATCHING_METHODS[scorer], 5, 3, 5, 1, "short-case-v1",
                      "engine 1", repetitions, True, status),)
    answer_map = {}
    for (cv_id, rep), (answer, rerun) in answers.items():
        for run in runs:
            answer_map[(run.id, cv_id, rep)] = m.Answer(run.id, cv_id, rep, answer, rerun, "answers.json")
    config = m.Config(MappingProxyType({"sv": "Kvalitet", "en": "Quality"}), "https://example.org/", ("sv", "en"), "sv",
                      "https://example.org/repo", ("answers.json",), (), ())
    return m.Records(config, (suite,), MappingProxyType({cv.id: cv for cv in case_versions}), tuple(pairs),
                     MappingProxyType({"setup": setup}), tuple(runs), MappingProxyType(answer_map), ())
