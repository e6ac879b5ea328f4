"""Release check: compare an OLD and a NEW engine version on a golden set and decide whether NEW may be released.

Input (one record per line, tokens separated by runs of spaces or tabs)::

    THRESHOLDS <correctness> <citation> <refusal>
    <id> ANSWER <requiredSource> <keyword1,keyword2,...>
    <id> REFUSE - -
    RESULTS
    <OLD|NEW> <id> <cited|-> <Y|N> <answer words...>

Choices this module makes where the task leaves them open:

- The input is UTF-8; a byte order mark before the first line is ignored.
- Lines are split on "\\n" only and numbered from 1. Leading and trailing spaces,
  tabs and a carriage return are ignored on every line; lines that are empty
  after that are skipped anywhere in the input.
- A line's first token decides its role: THRESHOLDS (first line only), RESULTS
  (once), a golden item before RESULTS, a result after it. THRESHOLDS, RESULTS,
  ANSWER/REFUSE, OLD/NEW and Y/N are upper case exactly as written here.
- Only the keyword check ignores case: keyword and answer are both casefolded,
  then compared as substrings. Source ids and golden ids are compared exactly.
- The answer text is everything after the refused flag and the spaces that
  follow it, up to the end of the line without trailing whitespace; its inner
  spacing is kept. It may be empty: an empty answer contains no keyword.
- Thresholds are plain decimals (``0``, ``0.6``, ``1.0``; a sign is read so
  that ``-0.1`` is reported as out of range) in [0, 1], read as exact
  fractions. Every comparison (threshold, regression) is between exact
  fractions: 2/3 is below 0.67 although it is displayed as 0.67.
- Display rounds the exact fraction to two decimals half up (ROUND_HALF_UP:
  1/8 shows as 0.13), in integer arithmetic, so no binary float is involved.
- A metric whose denominator is zero (no ANSWER items, or no REFUSE items) is
  not applicable: it prints as ``n/a``, is never below a threshold and never
  a regression. A golden set with no items at all is an input error.
- Every golden item needs exactly one OLD and one NEW result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal
from fractions import Fraction

from sitegen.core.errors import Diagnostic, DiagnosticsError

OLD = "OLD"
NEW = "NEW"
VERSIONS = (OLD, NEW)
ANSWER = "ANSWER"
REFUSE = "REFUSE"
TYPES = (ANSWER, REFUSE)
METRICS = ("correctness", "citation", "refusal")
NOT_APPLICABLE = "n/a"

_SPACES = re.compile(r"[ \t]+")
_DECIMAL = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")
_RESULT = re.compile(r"([^ \t]+)[ \t]+([^ \t]+)[ \t]+([^ \t]+)[ \t]+([^ \t]+)(?:[ \t]+(.*))?", re.DOTALL)
_STRIP = " \t\r"


class ReleaseInputError(DiagnosticsError):
    """The release-check input is malformed; every problem found is listed."""

    exit_code = 2


@dataclass(frozen=True)
class Thresholds:
    correctness: Fraction
    citation: Fraction
    refusal: Fraction


@dataclass(frozen=True)
class GoldenItem:
    """One golden-set item; REFUSE items have no source and no keywords."""

    id: str
    type: str
    source: str | None
    keywords: tuple[str, ...]
    line: int


@dataclass(frozen=True)
class Result:
    """One version's answer to one golden item; cited is None for `-`."""

    version: str
    id: str
    cited: str | None
    refused: bool
    answer: str
    line: int


@dataclass(frozen=True)
class ReleaseInput:
    thresholds: Thresholds
    golden: tuple[GoldenItem, ...]
    results: tuple[Result, ...]


@dataclass(frozen=True)
class VersionScore:
    """A version's three ratios (None when the denominator is zero) and its violation count."""

    version: str
    correctness: Fraction | None
    citation: Fraction | None
    refusal: Fraction | None
    violations: int

    def metric(self, name: str) -> Fraction | None:
        return getattr(self, name)


@dataclass(frozen=True)
class ReleaseDecision:
    """The scores of both versions and, for NEW, release or the ordered reasons to block."""

    old: VersionScore
    new: VersionScore
    reasons: tuple[str, ...]

    @property
    def release(self) -> bool:
        return not self.reasons


class _Collector:
    """Gathers diagnostics for one input so every problem is reported at once."""

    def __init__(self, source: str):
        self.source = source
        self.diagnostics: list[Diagnostic] = []

    def add(self, kind: str, message: str, *, line: int) -> None:
        self.diagnostics.append(Diagnostic(self.source, line, None, None, message, f"release.{kind}"))


def decode_release_input(data: bytes, *, source: str = "<stdin>") -> str:
    """The input's text without a leading byte order mark (an editor's, not part of the first line); bytes that are not
    UTF-8 are refused at their line and column (counted in characters)."""
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as error:
        start = data.rfind(b"\n", 0, error.start) + 1
        line = data.count(b"\n", 0, error.start) + 1
        column = len(data[start : error.start].decode("utf-8", "replace")) + 1
        raise ReleaseInputError([Diagnostic(source, line, column, None, "the input is not valid UTF-8",
                                            "release.encoding")]) from None


def parse_release_input(text: str, *, source: str = "<stdin>") -> ReleaseInput:
    """Read the whole input and report every malformed line at once, so one fix-and-retry round suffices."""
    problems = _Collector(source)
    lines = [(number, raw.strip(_STRIP)) for number, raw in enumerate(text.split("\n"), start=1)]
    lines = [(number, line) for number, line in lines if line]
    if not lines:
        problems.add("empty", "the input is empty; expected a THRESHOLDS line, golden items, RESULTS and results",
                     line=1)
        raise ReleaseInputError(problems.diagnostics)

    thresholds = None
    first_number, first_line = lines[0]
    if _SPACES.split(first_line)[0] == "THRESHOLDS":
        thresholds = _parse_thresholds(first_number, first_line, problems=problems)
        lines = lines[1:]
    else:
        problems.add("missing-thresholds",
                     "the first line must be THRESHOLDS <correctness> <citation> <refusal>", line=first_number)

    golden: list[GoldenItem] = []
    known: dict[str, int] = {}
    results: list[Result] = []
    seen: dict[tuple[str, str], int] = {}
    results_line = None
    for number, line in lines:
        head = _SPACES.split(line)
        if head[0] == "THRESHOLDS":
            problems.add("misplaced-thresholds", "THRESHOLDS may appear only once, as the first line", line=number)
        elif head[0] == "RESULTS":
            if results_line is not None:
                problems.add("duplicate-results", f"a second RESULTS line (the first is on line {results_line})",
                             line=number)
            else:
                results_line = number
                if len(head) > 1:
                    problems.add("results-fields", "the RESULTS line takes no fields", line=number)
        elif results_line is None:
            item = _parse_golden(number, head, problems=problems)
            if head[0] in known:
                problems.add("duplicate-golden",
                             f'golden item "{head[0]}" is already defined on line {known[head[0]]}', line=number)
            else:
                known[head[0]] = number
                if item is not None:
                    golden.append(item)
        else:
            result = _parse_result(number, line, known=known, problems=problems)
            # a line with a bad flag still answers its item, so it is not also reported as missing
            key = (head[0], head[1] if len(head) > 1 else "")
            if key in seen:
                problems.add("duplicate-result", f'a second {key[0]} result for "{key[1]}" '
                             f"(the first is on line {seen[key]})", line=number)
            elif key[0] in VERSIONS and key[1] in known:
                seen[key] = number
                if result is not None:
                    results.append(result)

    last_number = lines[-1][0] if lines else first_number
    if results_line is None:
        problems.add("missing-results", "no RESULTS line separates the golden items from the results", line=last_number)
    if not known:
        problems.add("no-golden", "the golden set has no items; nothing could be scored",
                     line=results_line or last_number)
    for item_id, number in known.items():
        for version in VERSIONS:
            if results_line is not None and (version, item_id) not in seen:
                problems.add("missing-result", f'golden item "{item_id}" has no {version} result', line=number)

    if problems.diagnostics:
        raise ReleaseInputError(sorted(problems.diagnostics, key=lambda d: d.line or 0))
    assert thresholds is not None
    return ReleaseInput(thresholds, tuple(golden), tuple(results))


def _parse_thresholds(number: int, line: str, *, problems: _Collector) -> Thresholds | None:
    """Read the three thresholds as exact fractions so no rounding can move a decision."""
    fields = _SPACES.split(line)[1:]
    if len(fields) != len(METRICS):
        problems.add("threshold-count",
                     f"THRESHOLDS needs 3 values (correctness citation refusal), found {len(fields)}", line=number)
        return None
    values = []
    for name, field in zip(METRICS, fields):
        if not _DECIMAL.fullmatch(field):
            problems.add("threshold-number", f'{name} threshold "{field}" is not a decimal number such as 0.6',
                         line=number)
            continue
        value = Fraction(Decimal(field))  # exact, and not bound by int()'s limit of 4,300 digits as Fraction(str) is
        if not 0 <= value <= 1:
            problems.add("threshold-range", f"{name} threshold {field} is outside [0, 1]", line=number)
            continue
        values.append(value)
    return Thresholds(*values) if len(values) == len(METRICS) else None


def _parse_golden(number: int, fields: list[str], *, problems: _Collector) -> GoldenItem | None:
    """Check one golden line against its TYPE's shape; None when it is malformed."""
    if len(fields) != 4:
        problems.add("golden-fields",
                     f"a golden item needs 4 fields (id TYPE requiredSource keywords), found {len(fields)}",
                     line=number)
        return None
    item_id, kind, source, keywords = fields
    if kind not in TYPES:
        problems.add("golden-type", f'unknown TYPE "{kind}" (expected ANSWER or REFUSE)', line=number)
        return None
    if kind == REFUSE:
        if source != "-" or keywords != "-":
            problems.add("refuse-fields", f'REFUSE item "{item_id}" must have "-" as requiredSource and keywords',
                         line=number)
            return None
        return GoldenItem(item_id, kind, None, (), number)
    if source == "-" or keywords == "-":
        problems.add("answer-fields", f'ANSWER item "{item_id}" needs a requiredSource and keywords, not "-"',
                     line=number)
        return None
    words = tuple(keywords.split(","))
    if any(not word for word in words):
        problems.add("empty-keyword",
                     f'ANSWER item "{item_id}" has an empty keyword (a stray comma) in "{keywords}"', line=number)
        return None
    return GoldenItem(item_id, kind, source, words, number)


def _parse_result(number: int, line: str, *, known: dict[str, int], problems: _Collector) -> Result | None:
    """Check one result line; its answer keeps the text after the refused flag as written."""
    match = _RESULT.fullmatch(line)
    if match is None:
        problems.add("result-fields",
                     f"a result needs at least 4 fields (version id cited refused), found {len(_SPACES.split(line))}",
                     line=number)
        return None
    version, item_id, cited, refused, answer = match.groups()
    valid = True
    if version not in VERSIONS:
        problems.add("unknown-version", f'unknown version "{version}" (expected OLD or NEW)', line=number)
        valid = False
    if item_id not in known:
        problems.add("unknown-id", f'result for "{item_id}", which is not a golden item', line=number)
        valid = False
    if refused not in ("Y", "N"):
        problems.add("refused-flag", f'refused flag "{refused}" must be Y or N', line=number)
        valid = False
    if not valid:
        return None
    return Result(version, item_id, None if cited == "-" else cited, refused == "Y", answer or "", number)


def decide_release(data: ReleaseInput) -> ReleaseDecision:
    """Score both versions and list NEW's blocking reasons in the fixed order readers rely on."""
    old = _score(data, OLD)
    new = _score(data, NEW)
    reasons = []
    for name in METRICS:
        value = new.metric(name)
        if value is not None and value < getattr(data.thresholds, name):
            reasons.append(f"{name} below threshold")
    if new.violations:
        reasons.append("integrity violations")
    for name in METRICS:
        before, after = old.metric(name), new.metric(name)
        if before is not None and after is not None and after < before:
            reasons.append(f"regression in {name}")
    return ReleaseDecision(old, new, tuple(reasons))


def _score(data: ReleaseInput, version: str) -> VersionScore:
    """Count one version over the golden items; a refused ANSWER item earns neither correctness nor citation."""
    answers = {r.id: r for r in data.results if r.version == version}
    correct = cited = refused = violations = answer_items = refuse_items = 0
    for item in data.golden:
        result = answers[item.id]
        if item.type == ANSWER:
            answer_items += 1
            if not result.refused:
                text = result.answer.casefold()
                correct += all(word.casefold() in text for word in item.keywords)
                cited += result.cited == item.source
        else:
            refuse_items += 1
            refused += result.refused
            violations += not result.refused
    return VersionScore(
        version,
        _ratio(correct, answer_items),
        _ratio(cited, answer_items),
        _ratio(refused, refuse_items),
        violations,
    )


def _ratio(count: int, total: int) -> Fraction | None:
    return Fraction(count, total) if total else None


def format_ratio(value: Fraction | None) -> str:
    """Round half up to two decimals from the exact fraction, so the display never depends on float rounding."""
    if value is None:
        return NOT_APPLICABLE
    hundredths = (value * 200 + 1) // 2  # floor(value * 100 + 1/2): half up for non-negative values
    whole, part = divmod(hundredths, 100)
    return f"{whole}.{part:02d}"


def format_release(decision: ReleaseDecision) -> str:
    """Render the report exactly as specified: one line per version, then the decision, newline-terminated."""
    lines = [
        f"{score.version}: correctness {format_ratio(score.correctness)} citation {format_ratio(score.citation)} "
        f"refusal {format_ratio(score.refusal)} violations {score.violations}"
        for score in (decision.old, decision.new)
    ]
    lines.append("RELEASE" if decision.release else "BLOCK: " + "; ".join(decision.reasons))
    return "\n".join(lines) + "\n"
