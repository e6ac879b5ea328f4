"""Observes a run a part of its case versions at a time, so that memory holds one part's verdicts and observations, not the run's.

Each measure observes a case version (an invariance pair: both its versions) on its own (reasons.derive_reasons relies on
the same), so a run's observations are those of its parts put together: counts add up, each case is in one part, and the
observations recorded are sorted into the record's order once all parts are in. A verifying pass needs every observation
of a run (a comparison looks at passed ones too); made a part at a time, at 10,000 case versions a scoring process no
longer holds a whole run's verdicts and 425,000 observations at once.
"""

from __future__ import annotations

from collections.abc import Iterator

from sitegen.core import model as m
from sitegen.score.comparison import merge_summaries, summarize
from sitegen.score.matching import PreparedCases, method_for
from sitegen.score.measures.base import Observed, judge_run
from sitegen.score.reasons import pack_reasons
from sitegen.score.scoring import aggregate_part, crashed_result, merge_results, observe, run_crashed

PART = 500  # case versions judged and observed together (more when invariance pairs join them)


def parts_of(records: m.Records, suite: m.Suite, size: int) -> tuple[tuple[str, ...], ...]:
    """The suite's case versions in parts of about `size`, in the suite's order, the two versions of a pair always together."""
    order = suite.case_versions
    in_suite = set(order)
    together = {cv: cv for cv in order}  # each case version's group, by a representative (union-find)

    def group(cv: str) -> str:
        while together[cv] != cv:
            together[cv] = together[together[cv]]
            cv = together[cv]
        return cv

    for pair in records.pairs:
        a, b = pair.versions
        if a in in_suite and b in in_suite:
            together[group(a)] = group(b)
    members: dict[str, list[str]] = {}
    for cv in order:
        members.setdefault(group(cv), []).append(cv)
    parts: list[set[str]] = []
    taken: set[str] = set()
    current: set[str] = set()
    for cv in order:
        if cv in taken:
            continue
        joined = members[group(cv)]
        current.update(joined)
        taken.update(joined)
        if len(current) >= size:
            parts.append(current)
            current = set()
    if current:
        parts.append(current)
    return tuple(tuple(cv for cv in order if cv in part) for part in parts)


def observe_whole(records: m.Records, run_id: str, prepared: PreparedCases,
                  size: int | None = None) -> tuple[m.RunResult, dict | None, bytes | None]:
    """A run's result, its summary for comparisons and its reasons packed, observed a part at a time (None and None for a
    CRASHED run): the same as observing it whole (scoring.observe_run) and aggregating, summarising and packing that.
    `size`: case versions a part, PART unless given."""
    run = records.run(run_id)
    version = run.scorer_version
    method = method_for(version)
    if run_crashed(records, run):
        return crashed_result(run, version, method.id), None, None
    suite = records.suite(run.suite, run.suite_version)
    results: list[m.RunResult] = []
    summaries: list[dict] = []
    why: list[Observed] = []  # the observations with a structured reason: those that did not plainly pass
    for part in _parts(records, suite, size or PART):
        judged = judge_run(records, run, method, prepared, only=frozenset(part))
        observed = observe(judged)
        results.append(aggregate_part(run, version, method.id, judged.case_versions, observed))
        summaries.append(summarize(observed))
        why.extend(o for items in observed.values() for o in items if o.why is not None)
        del judged, observed
    return merge_results(run, version, method.id, suite.case_versions, results), merge_summaries(summaries), pack_reasons(why)


def _parts(records: m.Records, suite: m.Suite, size: int) -> Iterator[tuple[str, ...]]:
    yield from parts_of(records, suite, size) if suite.case_versions else ((),)
