"""Frozen records passed between the pipeline's stages, so no stage can change what an earlier one read."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Mapping, NamedTuple

from sitegen.core.files import InMemoryFile, SourceFile  # noqa: F401 (part of the model: m.SourceFile, m.InMemoryFile)

FLAW = "flaw"
STRENGTH = "strength"
KINDS = (FLAW, STRENGTH)

REVIEWER = "reviewer"
REPORT = "report"
STAGES = (REVIEWER, REPORT)

INVARIANCE = "invariance"
CONTRAST = "contrast"

COMPLETED = "completed"
CRASHED = "crashed"

# Every scorer version sitegen ever shipped stays runnable, with the id of its matching method:
# v5 accepted exact quote matches only; v6 also accepts a wider quote on the same line ("contained"); v7 compares an
# invariance pair's unexpected findings by (kind, primary rule, missing flag), and lets a flaw survive the merge through
# a reviewer's duplicate of every expected finding it would match.
MATCHING_METHODS = {
    5: "structured-identity/whitespace-collapsed/v5",
    6: "structured-identity/whitespace-collapsed/v6",
    7: "structured-identity/whitespace-collapsed/v7",
}
CURRENT_SCORER = 7


@dataclass(frozen=True, slots=True)
class Rule:
    id: str
    title: str
    text: str


@dataclass(frozen=True, slots=True)
class Passage:
    """A span of the document; the loader resolves both the quote and its lines."""

    quote: str | None
    lines: tuple[int, int]


@dataclass(frozen=True, slots=True)
class KeyFinding:
    """An expected or prohibited finding of the answer key."""

    id: str
    kind: str
    rules: tuple[str, ...]
    missing: bool
    passage: Passage | None
    reviewer_expected: bool = True


@dataclass(frozen=True, slots=True)
class VoluntaryStrength:
    rule: str
    passage: Passage | None


@dataclass(frozen=True, slots=True)
class Key:
    expected: tuple[KeyFinding, ...]
    prohibited: tuple[KeyFinding, ...]
    voluntary: tuple[VoluntaryStrength, ...]


@dataclass(frozen=True, slots=True)
class CaseVersion:
    id: str
    case: str
    variant: str | None
    title: str
    document_type: str
    document: str
    rules: tuple[Rule, ...]
    key: Key

    @property
    def clean(self) -> bool:
        return not any(e.kind == FLAW for e in self.key.expected)

    @property
    def lines(self) -> tuple[str, ...]:
        return tuple(self.document.split("\n"))


@dataclass(frozen=True, slots=True)
class Pair:
    id: str
    kind: str
    versions: tuple[str, str]
    detail: str
    rules_differ: bool

    @property
    def compared(self) -> bool:
        return self.kind == INVARIANCE and not self.rules_differ


@dataclass(frozen=True, slots=True)
class Suite:
    id: str
    version: int
    title: str
    case_versions: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class Setup:
    id: str
    configuration_json: str  # canonical JSON text of the configuration
    fingerprint: str
    merge: bool


@dataclass(frozen=True, slots=True)
class Run:
    id: str
    date: str  # ISO date
    setup: str
    suite: str
    suite_version: int
    scorer_version: int
    matching_method: str
    report_version: int
    runner_version: int
    run_record_version: int
    assessment_version: int
    policy: str
    engine_version: str
    repetitions: int
    published: bool
    status: str


class Finding(NamedTuple):
    """One finding of the engine's answer. A named tuple, as the verdicts are, not a dataclass: a publication holds
    millions, each run's are made again from its packed tables (Finding._make, in C), and equal findings compare in C."""

    id: str
    kind: str
    rule: str
    supporting_rules: tuple[str, ...]
    missing: bool
    quote: str | None
    location: tuple[int, int] | None
    wording: str
    trace: tuple[str, ...] = ()


class QuoteCorrection(NamedTuple):
    finding: str
    before: str
    after: str


class Reviewer(NamedTuple):
    id: str
    findings: tuple[Finding, ...]


class EngineAnswer(NamedTuple):
    """What the engine returned for one case in one repetition (or its rerun).

    This and the answer around it are named tuples, as findings are: every run's answers are made again from its packed
    tables each time the run is unpacked, and a tuple is built in C, several times faster than a frozen dataclass."""

    status: str
    reviewers: tuple[Reviewer, ...]
    quote_corrections: tuple[QuoteCorrection, ...]
    report: tuple[Finding, ...] | None

    def stage_findings(self, stage: str) -> tuple[Finding, ...]:
        if stage == REVIEWER:
            return tuple(f for r in self.reviewers for f in r.findings)
        return self.report or ()

    def reviewer_of(self, finding_id: str) -> str | None:
        for reviewer in self.reviewers:
            if any(f.id == finding_id for f in reviewer.findings):
                return reviewer.id
        return None


class Answer(NamedTuple):
    run: str
    case_version: str
    repetition: int
    answer: EngineAnswer
    rerun: EngineAnswer | None
    source: str  # records file it came from


@dataclass(frozen=True, slots=True)
class Entry:
    """A hand-written changelog entry."""

    path: str
    date: str
    category: str
    explains: str | None
    source: str
    body: str  # Markdown, English
    explains_line: int | None = None  # line of the `explains:` header, so later checks can point at it


@dataclass(frozen=True, slots=True)
class PublishedFile:
    record: str  # path relative to records/
    name: str  # name it is served under


@dataclass(frozen=True, slots=True)
class Config:
    title: Mapping[str, str]
    base_url: str
    languages: tuple[str, ...]
    default_language: str
    source_repository: str
    answers: tuple[str, ...]
    publish: tuple[PublishedFile, ...]
    internal_fields: tuple[str, ...]
    document_language: str | None = None  # language of documents, rules and engine answers, for `lang` on them
    case_text_language: str | None = None  # language of case titles and pair descriptions, for `lang` on them
    accessibility_contact: str | None = None  # e-mail address or https URL for reporting an accessibility problem
    license: Mapping[str, str] | None = None  # {"name", "url"}: the licence the published files are offered under
    sitegen_source: str | None = None  # https URL of the source code of the sitegen that builds the site, for readers


@dataclass(frozen=True, slots=True)
class Records:
    config: Config
    suites: tuple[Suite, ...]
    case_versions: Mapping[str, CaseVersion]
    pairs: tuple[Pair, ...]
    setups: Mapping[str, Setup]
    runs: tuple[Run, ...]
    answers: Mapping[tuple[str, str, int], Answer]  # (run, case version, repetition)
    entries: tuple[Entry, ...]
    files: Mapping[str, SourceFile] = field(default_factory=dict)

    @property
    def results_json(self) -> bytes | None:
        """results.json as checked in, or None when absent; read when needed (it is large), checked against its hash."""
        source = self.files.get("results.json")
        return None if source is None else source.data

    def run(self, run_id: str) -> Run:
        for run in self.runs:
            if run.id == run_id:
                return run
        raise KeyError(run_id)

    def suite(self, suite_id: str, version: int) -> Suite:
        for suite in self.suites:
            if suite.id == suite_id and suite.version == version:
                return suite
        raise KeyError((suite_id, version))

    def stages(self, run: Run) -> tuple[str, ...]:
        return STAGES if self.setups[run.setup].merge else (REVIEWER,)

    @property
    def published_runs(self) -> tuple[Run, ...]:
        return tuple(r for r in self.runs if r.published)


# --- scored results -------------------------------------------------------

# the measures and their order: sitegen.score.measures.registry.MEASURES (a measure is one record there)

PASS = "PASS"
BLOCK = "BLOCK"
PENDING_CONFIRMATION = "PENDING_CONFIRMATION"
NOT_OBSERVED = "NOT_OBSERVED"
CRASHED_STATE = "CRASHED"
STATES = (PASS, BLOCK, PENDING_CONFIRMATION, NOT_OBSERVED, CRASHED_STATE)

# results of one observation
PASSED = "passed"
FAILED = "failed"
PENDING = "pending"
DISMISSED = "dismissed"  # first miss dismissed by a rerun: counts as passed, shown as such


class Observation(NamedTuple):
    """One observation that did not plainly pass; passed ones are only counted. A named tuple: a run's thousands are
    made from the measures' own tuples (scoring) and from the results record's rows, and looked up by value."""

    measure: str
    case_version: str  # for INVARIANT_PAIRS: the pair's first version
    repetition: str  # "2", or "1-3" for a pair of repetitions
    stage: str
    subject: str  # expected finding id, quoted text, pair id, or "-"
    result: str  # failed | pending | dismissed
    reason: str  # short code, e.g. "evidence", "kind", "count.flaws"
    detail: str  # one sentence in English for maintainers


@dataclass(frozen=True, slots=True)
class MeasureResult:
    measure: str
    state: str
    passed: int
    observed: int
    failed: int
    pending: int
    dismissed: int


class CaseResult(NamedTuple):
    """A case version's result in one repetition: passed/observed per measure it took part in (a named tuple: a run has
    one per case version and repetition, made at every scoring and every unpacking of a results record)."""

    case_version: str
    repetition: int
    state: str
    measures: Mapping[str, tuple[int, int]]


@dataclass(frozen=True, slots=True)
class Seal:
    """The SHA-256 of every input a run was scored from, recorded with its result so a later edit of one can be named."""

    run: Mapping[str, str]  # runs.json field path ("date", "scorer/version") -> digest of its value
    setup_fingerprint: str
    case_versions: Mapping[str, Mapping[str, str]]  # case version -> {"document", "rules", "key"} -> digest
    pairs: Mapping[str, str]  # pair id -> digest, the pairs among the suite's case versions
    answers: Mapping[str, Mapping[str, str]]  # case version -> repetition ("1") -> digest of the answer with its rerun


@dataclass(frozen=True, slots=True)
class RunResult:
    run: str
    scorer_version: int
    matching_method: str
    outcome: str
    measures: tuple[MeasureResult, ...]
    cases: tuple[CaseResult, ...]
    observations: tuple[Observation, ...]
    seal: Seal | None = None  # None: recorded before sealing, or not sealed yet (`sitegen score --seal`)

    def headline(self) -> RunResult:
        """Its outcome and measures alone (no cases, observations or seal): what is kept of every run at once."""
        return replace(self, cases=(), observations=(), seal=None)


# --- how each finding of one stage fared, for case pages and `sitegen explain` ---
# Named tuples (immutable like the dataclasses above): every stage of every answer builds them, so they must be cheap.

MATCHED = "matched"
DUPLICATE = "duplicate"
PROHIBITED = "prohibited"
VOLUNTARY = "voluntary"
UNEXPECTED = "unexpected"
CATEGORIES = (MATCHED, DUPLICATE, PROHIBITED, VOLUNTARY, UNEXPECTED)

EXACT = "exact"
CONTAINED = "contained"
LOCATION = "location"
NO_EVIDENCE = "absent"  # matched a no-passage expected finding by quoting nothing


class FindingVerdict(NamedTuple):
    finding: Finding
    category: str
    key_finding: str | None  # expected/prohibited id it matched, if any
    evidence: str | None  # exact | contained | location | absent
    quote_found: bool | None  # None when the finding has no quote
    # a duplicate: every expected finding it would match that another finding took, in key order (key_finding is the first)
    duplicate_of: tuple[str, ...] = ()


class ExpectedVerdict(NamedTuple):
    expected: KeyFinding
    finding: str | None  # id of the matched finding
    evidence: str | None
    reason: str | None  # why nothing matched: nothing | kind | rule | missing | evidence
    closest: str | None  # id of the finding that came closest, if any


class StageVerdict(NamedTuple):
    """All findings of one stage of one answer, each in exactly one category."""

    findings: tuple[FindingVerdict, ...]
    expected: tuple[ExpectedVerdict, ...]
