"""Properties the method promises for any input: order never matters, duplicates cost nothing, whitespace is one space."""

import dataclasses
import json
import shutil
import tempfile
from pathlib import Path
from types import MappingProxyType

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from factories import DOCUMENT, case_version, engine, expected, finding, records
from sitegen.core import model as m
from sitegen.score.matching import CaseContext, judge_stage, method_for
from sitegen.score.measures.base import Difference, Passed, judge_run
from sitegen.score.measures.identical_input_stability import _differences, _signature
from sitegen.score.measures.registry import MEASURE_FUNCTIONS
from sitegen.load.records import load_records
from sitegen.score.scoring import aggregate_observed, observe_run, score_run

SMALL = Path(__file__).parent / "data" / "records-small"
LINES = DOCUMENT.split("\n")
RULES = ("R-1", "R-2", "R-3")
SETTINGS = settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture])

# Several expected findings, distinct in what they ask for, some sharing a line so exact and contained matches compete.
KEY = (
    expected("leak-unchecked", "flaw", ("R-1",), True, quote="Läckan är åtgärdad."),
    expected("leak-line", "flaw", ("R-1", "R-2"), False, quote=LINES[3]),
    expected("tap-stated", "strength", ("R-2",), False, quote="Provet togs ur kranen i pumphallen."),
    expected("seals", "flaw", ("R-2",), True, quote="Plomberna undersöktes.", reviewer_expected=False),
    expected("author-absent", "flaw", ("R-3",), True, no_passage=True),
    expected("object-lines", "strength", ("R-1",), False, lines=(2, 2), quote=None),
)
PROHIBITED = (expected("praise-leak", "strength", ("R-1",), False, quote="Läckan är åtgärdad."),)
VOLUNTARY = (m.VoluntaryStrength("R-3", None),)


@st.composite
def evidence(draw):
    """A quote or location of the kinds an engine gives: whole lines, parts of lines, spans, made-up text, or nothing."""
    choice = draw(st.sampled_from(["line", "part", "span", "invented", "location", "nothing"]))
    if choice == "line":
        return draw(st.sampled_from(LINES)), None
    if choice == "part":
        line = draw(st.sampled_from([l for l in LINES if " " in l]))
        words = line.split(" ")
        start = draw(st.integers(0, len(words) - 1))
        end = draw(st.integers(start + 1, len(words)))
        return " ".join(words[start:end]), None
    if choice == "span":
        first = draw(st.integers(1, len(LINES) - 1))
        return "\n".join(LINES[first - 1:first + 1]), None
    if choice == "invented":
        return draw(st.sampled_from(["Läckan åtgärdad.", "Provet togs ur en kran.", "Ingen anteckning."])), None
    if choice == "location":
        first = draw(st.integers(1, len(LINES)))
        return None, (first, draw(st.integers(first, min(first + 1, len(LINES)))))
    return None, None


@st.composite
def findings(draw, prefix="f", min_size=0, max_size=7):
    count = draw(st.integers(min_size, max_size))
    made = []
    for index in range(count):
        quote, location = draw(evidence())
        made.append(finding(f"{prefix}{index}", draw(st.sampled_from(m.KINDS)), draw(st.sampled_from(RULES)), draw(st.booleans()),
                            quote=quote, location=location))
    return tuple(made)


@st.composite
def answers(draw, repetitions=2):
    """Engine answers with a merge: two reviewers, and a report built from some of their findings with a trace."""
    result = {}
    for rep in range(1, repetitions + 1):
        first, second = draw(findings(f"a{rep}-")), draw(findings(f"b{rep}-", max_size=3))
        reviewers = (m.Reviewer("reviewer-1", first), m.Reviewer("reviewer-2", second))
        pool = first + second
        kept = draw(st.lists(st.sampled_from(pool), unique_by=lambda f: f.id, max_size=len(pool))) if pool else []
        report = tuple(f._replace(id=f"rep-{i}", trace=(f.id,)) for i, f in enumerate(kept))
        rerun = draw(st.none() | st.just(engine(reviewers=reviewers, report=report)))
        result[("cv", rep)] = (engine(reviewers=reviewers, report=report), rerun)
    return result


def built(key=KEY, answer_map=None, *, repetitions=2):
    cv = case_version("cv", expected_findings=key, prohibited=PROHIBITED, voluntary=VOLUNTARY, rules=RULES)
    return records([cv], answer_map, merge=True, repetitions=repetitions)


def counts(result: m.RunResult):
    """Every number the run shows: per measure, and per case and repetition."""
    return (result.outcome,
            tuple((x.measure, x.state, x.passed, x.observed, x.failed, x.pending, x.dismissed) for x in result.measures),
            tuple((c.case_version, c.repetition, c.state, tuple(sorted(c.measures.items()))) for c in result.cases))


@SETTINGS
@given(answer_map=answers(), order=st.permutations(range(len(KEY))))
def test_the_order_of_expected_findings_in_the_key_never_changes_a_count(answer_map, order):
    original = score_run(built(KEY, answer_map), "run")
    shuffled = score_run(built(tuple(KEY[i] for i in order), answer_map), "run")
    assert counts(shuffled) == counts(original)


@SETTINGS
@given(answer_map=answers(), data=st.data())
def test_the_order_of_the_answers_mapping_never_changes_the_results(answer_map, data):
    base = built(KEY, answer_map)
    items = list(base.answers.items())
    permuted = data.draw(st.permutations(items))
    reordered = dataclasses.replace(base, answers=MappingProxyType(dict(permuted)))
    assert score_run(reordered, "run") == score_run(base, "run")


@settings(max_examples=8, deadline=None)
@given(data=st.data())
def test_the_order_of_answers_in_the_answers_file_never_changes_the_results(data):
    original = load_records(SMALL)
    expected_results = {run.id: score_run(original, run.id) for run in original.runs}
    with tempfile.TemporaryDirectory() as folder:
        root = Path(folder) / "records"
        shutil.copytree(SMALL, root)
        for name in original.config.answers:
            document = json.loads((root / name).read_text(encoding="utf-8"))
            document["answers"] = data.draw(st.permutations(document["answers"]), label=name)
            (root / name).write_text(json.dumps(document, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        shuffled = load_records(root)
        for run in shuffled.runs:
            assert score_run(shuffled, run.id) == expected_results[run.id], run.id


@st.composite
def with_a_match(draw, prefix="a"):
    """Random findings plus, somewhere among them, one built to match a random expected finding of the key."""
    others = draw(findings(prefix))
    target = draw(st.sampled_from(KEY))
    quote = target.passage.quote if target.passage is not None else None
    location = target.passage.lines if target.passage is not None and quote is None else None
    made = finding(f"{prefix}-match", target.kind, draw(st.sampled_from(target.rules)), target.missing, quote=quote, location=location)
    at = draw(st.integers(0, len(others)))
    return others[:at] + (made,) + others[at:]


def _matched(answer: m.EngineAnswer, records_: m.Records) -> list[m.Finding]:
    ctx = CaseContext(records_.case_versions["cv"])
    verdict = judge_stage(ctx, answer.stage_findings(m.REVIEWER), method_for(6))
    return [v.finding for v in verdict.findings if v.category == m.MATCHED]


@SETTINGS
@given(data=st.data())
def test_a_duplicate_of_a_matched_finding_changes_nothing_but_quote_fidelity(data):
    # Every repetition gets the same answer and the same duplicate: stability compares the number of flaws and
    # strengths between repetitions, so a duplicate in only one of them would rightly change that comparison.
    reviewer = data.draw(with_a_match())
    answer = engine(reviewers=(m.Reviewer("reviewer-1", reviewer),), report=tuple(
        f._replace(id=f"rep-{i}", trace=(f.id,)) for i, f in enumerate(reviewer)))
    base = built(KEY, {("cv", 1): (answer, None), ("cv", 2): (answer, None)})
    matched = _matched(answer, base)
    if not matched:
        return
    original = data.draw(st.sampled_from(matched))
    copy = original._replace(id="copy-of-" + original.id, wording="Samma sak, sagt igen.")
    doubled = engine(reviewers=(m.Reviewer("reviewer-1", reviewer + (copy,)),), report=answer.report)
    with_copy = built(KEY, {("cv", 1): (doubled, None), ("cv", 2): (doubled, None)})

    before, after = score_run(base, "run"), score_run(with_copy, "run")
    assert before.outcome == after.outcome
    extra = 2 if original.quote is not None else 0  # one more quote in each of the two repetitions
    for x, y in zip(before.measures, after.measures):
        if x.measure == "QUOTE_FIDELITY":
            assert (y.observed, y.passed, y.failed) == (x.observed + extra, x.passed + extra, x.failed)
        else:
            assert x == y
    verdict = judge_stage(CaseContext(with_copy.case_versions["cv"]), doubled.stage_findings(m.REVIEWER), method_for(6))
    assert {v.finding.id: v.category for v in verdict.findings}[copy.id] == m.DUPLICATE


def _respace(quote: str, draw) -> str:
    """The same quote with each inner space turned into a run of spaces, tabs and line breaks."""
    words = quote.split(" ")
    out = words[0]
    for word in words[1:]:
        out += draw(st.text(alphabet=" \t\n", min_size=1, max_size=4)) + word
    return out


@SETTINGS
@given(data=st.data())
def test_whitespace_edits_to_a_quote_never_change_its_match_or_its_fidelity(data):
    reviewer = data.draw(with_a_match()) + (finding("quoted", quote=data.draw(evidence().filter(lambda e: e[0] is not None))[0]),)
    quoted = [i for i, f in enumerate(reviewer) if f.quote is not None and " " in f.quote.strip()]
    if not quoted:
        return
    index = data.draw(st.sampled_from(quoted))
    target = reviewer[index]
    edited_quote = _respace(target.quote.replace("\n", " "), data.draw)
    edited = reviewer[:index] + (target._replace(quote=edited_quote),) + reviewer[index + 1:]

    ctx = CaseContext(case_version("cv", expected_findings=KEY, prohibited=PROHIBITED, voluntary=VOLUNTARY, rules=RULES))
    for method in (method_for(5), method_for(6)):
        a, b = judge_stage(ctx, reviewer, method), judge_stage(ctx, edited, method)
        assert [(v.category, v.key_finding, v.evidence, v.quote_found) for v in a.findings] == \
            [(v.category, v.key_finding, v.evidence, v.quote_found) for v in b.findings]
        assert [(v.finding, v.evidence, v.reason) for v in a.expected] == [(v.finding, v.evidence, v.reason) for v in b.expected]

    answer = lambda fs: {("cv", 1): (engine(reviewers=(m.Reviewer("reviewer-1", fs),), report=()), None)}
    before = score_run(built(KEY, answer(reviewer), repetitions=1), "run")
    after = score_run(built(KEY, answer(edited), repetitions=1), "run")
    fidelity = lambda r: next(x for x in r.measures if x.measure == "QUOTE_FIDELITY")
    assert fidelity(before) == fidelity(after)
    assert counts(before) == counts(after)


@st.composite
def repeating_answers(draw, repetitions=3):
    """Answers where a later repetition often repeats an earlier one exactly, as an engine does."""
    drawn = draw(answers(repetitions))
    for rep in range(2, repetitions + 1):
        earlier = draw(st.integers(0, rep - 1))  # 0: it keeps its own answer
        if earlier:
            drawn[("cv", rep)] = drawn[("cv", earlier)]
    return drawn


def _passed_per_case(judged, stream) -> dict[tuple[str, int], int]:
    """How many passed observations each (case version, repetition) took part in, however they were given."""
    tally: dict[tuple[str, int], int] = {}
    for obs in stream:
        if type(obs) is Passed:
            assert len(obs.involved) == len(judged.slots)
            for slot, count in zip(judged.slots, obs.involved):
                if count:
                    tally[slot.cases[0]] = tally.get(slot.cases[0], 0) + count
            continue
        for case in obs.cases:
            tally[case] = tally.get(case, 0) + int(obs.result == m.PASSED)
    return {case: count for case, count in tally.items() if count}


def _stream_agrees(judged) -> None:
    for measure, function in MEASURE_FUNCTIONS.items():
        listed, counted = list(function(judged)), list(function(judged, listed=False))
        assert [o for o in counted if type(o) is not Passed] == [o for o in listed if o.result != m.PASSED], measure
        assert _passed_per_case(judged, counted) == _passed_per_case(judged, listed), measure
        assert sum(o.count for o in counted if type(o) is Passed) == sum(1 for o in listed if o.result == m.PASSED), measure
        assert sum(type(o) is Passed for o in counted) <= 1, measure  # counted once, after the observations that did not pass


@SETTINGS
@given(answer_map=repeating_answers())
def test_counting_the_passed_observations_gives_what_listing_them_gives(answer_map):
    base = built(KEY, answer_map, repetitions=3)
    _stream_agrees(judge_run(base, base.run("run"), method_for(base.run("run").scorer_version)))
    assert aggregate_observed(base, "run", observe_run(base, "run")) == score_run(base, "run")


def test_counting_the_passed_observations_gives_what_listing_them_gives_on_real_records():
    for folder in (SMALL, Path(__file__).resolve().parent.parent / "records"):
        loaded = load_records(folder)
        for run in loaded.runs:
            observed = observe_run(loaded, run.id)
            if observed is None:
                continue
            _stream_agrees(judge_run(loaded, run, method_for(run.scorer_version)))
            assert aggregate_observed(loaded, run.id, observed) == score_run(loaded, run.id), (folder.name, run.id)


@SETTINGS
@given(left=findings("a"), right=findings("b"))
def test_equal_stability_signatures_are_those_where_no_entry_of_the_summaries_differs(left, right):
    # IDENTICAL_INPUT_STABILITY compares two signatures in one go, and words only the entries that differ: the same
    # entries, in the same order, as comparing the two summaries the method describes entry by entry
    ctx = CaseContext(case_version("cv", expected_findings=KEY, prohibited=PROHIBITED, voluntary=VOLUNTARY, rules=RULES))
    verdicts = [judge_stage(ctx, f, method_for(6)) for f in (left, right)]
    one, two = (_described(v) for v in verdicts)
    described = [Difference(k, one[k], two[k]) for k in one if one[k] != two[k]]
    signatures = [_signature(v) for v in verdicts]
    assert (signatures[0] == signatures[1]) == (not described)
    assert list(_differences(verdicts[0].expected, *signatures)) == described


def _described(verdict) -> dict:
    """A repetition's summary as METHOD.md words it: each expected finding matched or missed, then the four counts."""
    summary = {f"expected:{ev.expected.id}": ("matched" if ev.finding else "missed") for ev in verdict.expected}
    counted = [v for v in verdict.findings if v.category != m.VOLUNTARY]
    summary.update(flaws=sum(v.finding.kind == m.FLAW for v in counted), strengths=sum(v.finding.kind == m.STRENGTH for v in counted),
                   unexpected=sum(v.category == m.UNEXPECTED for v in counted),
                   prohibited=sum(v.category == m.PROHIBITED for v in counted))
    return summary
