"""A run observed a part of its case versions at a time gives exactly what observing it whole gives (score/parts.py)."""

from dataclasses import replace
from pathlib import Path

import pytest

from sitegen.core import model as m
from sitegen.load.records import load_records
from sitegen.score.comparison import compare_summaries, summarize
from sitegen.score.matching import PreparedCases
from sitegen.score.parts import observe_whole, parts_of
from sitegen.score.reasons import pack_reasons, unpack_reasons
from sitegen.score.scoring import aggregate_observed, observe_run, score_run

RECORDS = Path(__file__).resolve().parent.parent / "records"


@pytest.fixture(scope="module")
def records() -> m.Records:
    return load_records(RECORDS)


def _whole(records: m.Records, run_id: str):
    observed = observe_run(records, run_id)
    if observed is None:
        return score_run(records, run_id), None, None
    return (aggregate_observed(records, run_id, observed), summarize(observed),
            unpack_reasons(pack_reasons(o for items in observed.values() for o in items)))


@pytest.mark.parametrize("size", [1, 2, 3, 7, 10_000])
def test_observed_in_parts_is_observed_whole(records, size):
    """Result, summary and reasons of every run, crashed ones included, are the same whatever the parts' size."""
    prepared = PreparedCases(records.case_versions)
    for run in records.runs:
        result, summary, reasons = observe_whole(records, run.id, prepared, size)
        whole = _whole(records, run.id)
        assert result == whole[0], run.id
        assert summary == whole[1], run.id
        assert (None if reasons is None else unpack_reasons(reasons)) == whole[2], run.id


def test_parts_keep_the_suite_order_and_each_pair_together(records):
    suite = max(records.suites, key=lambda s: len(s.case_versions))
    paired = [p for p in records.pairs if set(p.versions) <= set(suite.case_versions)]
    assert paired, "the bundled records pair case versions"
    for size in (1, 2, 5, len(suite.case_versions) + 1):
        parts = parts_of(records, suite, size)
        assert sorted(cv for part in parts for cv in part) == sorted(suite.case_versions), "each case version in one part"
        at = {cv: i for i, cv in enumerate(suite.case_versions)}
        assert all(list(part) == sorted(part, key=at.__getitem__) for part in parts), "in the suite's order"
        part_of = {cv: i for i, part in enumerate(parts) for cv in part}
        assert all(part_of[p.versions[0]] == part_of[p.versions[1]] for p in paired), "a pair's versions together"
        assert all(len(part) >= size for part in parts[:-1]), "parts filled up to the size"


def test_pairs_sharing_a_version_are_one_group(records):
    """Two pairs with a version in common keep all three versions in one part, wherever they stand in the suite."""
    suite = max(records.suites, key=lambda s: len(s.case_versions))
    first, middle, last = suite.case_versions[0], suite.case_versions[len(suite.case_versions) // 2], suite.case_versions[-1]
    template = records.pairs[0]
    chained = replace(records, pairs=(replace(template, id="a", versions=(first, last)),
                                      replace(template, id="b", versions=(middle, last))))
    parts = parts_of(chained, suite, 1)
    together = [part for part in parts if first in part]
    assert len(together) == 1 and {first, middle, last} <= set(together[0])
    assert sum(len(part) == 1 for part in parts) == len(suite.case_versions) - 3


def test_a_comparison_of_summaries_made_in_parts_is_the_one_made_whole(records):
    """Every change between two comparable runs is found the same way when each was summarised in parts."""
    prepared = PreparedCases(records.case_versions)
    runs = sorted((r for r in records.published_runs if observe_run(records, r.id) is not None), key=lambda r: (r.date, r.id))
    compared = 0
    for a, b in zip(runs, runs[1:]):
        if (a.suite, a.suite_version, a.scorer_version) != (b.suite, b.suite_version, b.scorer_version):
            continue
        whole = compare_summaries(records, a, b, _whole(records, a.id)[1], _whole(records, b.id)[1])
        in_parts = compare_summaries(records, a, b, observe_whole(records, a.id, prepared, 2)[1],
                                     observe_whole(records, b.id, prepared, 2)[1])
        assert in_parts == whole
        compared += bool(whole.changes)
    assert compared, "some pair of runs differs observation by observation"
