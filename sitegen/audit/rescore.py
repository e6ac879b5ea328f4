"""Where published results and a fresh scoring of the same run part ways, every difference named by run, measure and
observation (the build stops at the first; a reader wants them all)."""

from __future__ import annotations

from collections import Counter, defaultdict
from typing import Callable, Mapping

from sitegen.core import model as m
from sitegen.core.errors import Diagnostic
from sitegen.score.results import compare_result

Locate = Callable[[str, str, str], Diagnostic]  # (JSON pointer into the results file, message, code) -> a placed diagnostic
COUNTS = ("state", "passed", "observed", "failed", "pending", "dismissed")


def run_differences(recorded: m.RunResult, fresh: m.RunResult, *, index: int, at: Locate) -> list[Diagnostic]:
    """Every difference between a run's published results and its fresh scoring; [] when they are the same bytes."""
    if compare_result(recorded, fresh) is None:
        return []
    run = recorded.run
    base = f"/runs/{index}"
    found: list[Diagnostic] = []
    for field in ("scorer_version", "matching_method", "outcome"):
        old, new = getattr(recorded, field), getattr(fresh, field)
        if old != new:
            found.append(at(f"{base}/{field}", f"run {run}: {field} is {old} in the published results, {new} re-scored",
                            f"verify.{field.replace('_', '-')}"))
    found += _measures(recorded, fresh, base, at)
    found += _cases(recorded, fresh, base, at)
    found += _observations(recorded, fresh, base, at)
    if not found:  # the same values, listed in another order than sitegen writes them
        difference = compare_result(recorded, fresh)
        found.append(at(f"{base}{difference.pointer}", f"run {run}: the published results hold the re-scored values in another "
                        "order than sitegen writes them", "verify.order"))
    return found


def _measures(recorded: m.RunResult, fresh: m.RunResult, base: str, at: Locate) -> list[Diagnostic]:
    found = []
    fresh_by = {x.measure: x for x in fresh.measures}
    for position, old in enumerate(recorded.measures):
        new = fresh_by.pop(old.measure, None)
        if new is None:
            found.append(at(f"{base}/measures/{position}", f"run {recorded.run}, measure {old.measure}: in the published results, "
                            "but not among the measures re-scored", "verify.measure"))
            continue
        for field in COUNTS:
            if getattr(old, field) != getattr(new, field):
                found.append(at(f"{base}/measures/{position}/{field}", f"run {recorded.run}, measure {old.measure}: {field} is "
                                f"{getattr(old, field)} in the published results, {getattr(new, field)} re-scored", "verify.count"))
    for name in fresh_by:
        found.append(at(f"{base}/measures", f"run {recorded.run}, measure {name}: re-scored, but missing from the published results",
                        "verify.measure"))
    return found


def _cases(recorded: m.RunResult, fresh: m.RunResult, base: str, at: Locate) -> list[Diagnostic]:
    found = []
    fresh_by = {(c.case_version, c.repetition): c for c in fresh.cases}
    for position, old in enumerate(recorded.cases):
        where = f"run {recorded.run}, case {old.case_version} repetition {old.repetition}"
        new = fresh_by.pop((old.case_version, old.repetition), None)
        if new is None:
            found.append(at(f"{base}/cases/{position}", f"{where}: in the published results, but not re-scored", "verify.case"))
            continue
        if old.state != new.state:
            found.append(at(f"{base}/cases/{position}/state", f"{where}: state is {old.state} in the published results, "
                            f"{new.state} re-scored", "verify.case-count"))
        for measure in sorted(set(old.measures) | set(new.measures)):
            a, b = old.measures.get(measure), new.measures.get(measure)
            if a != b:
                found.append(at(f"{base}/cases/{position}/measures/{measure}", f"{where}, measure {measure}: {_pair(a)} in the "
                                f"published results, {_pair(b)} re-scored", "verify.case-count"))
    for case_version, repetition in fresh_by:
        found.append(at(f"{base}/cases", f"run {recorded.run}, case {case_version} repetition {repetition}: re-scored, but missing "
                        "from the published results", "verify.case"))
    return found


def _pair(value) -> str:
    return "not observed" if value is None else f"{value[0]} of {value[1]} passed"


def _identity(o: m.Observation) -> tuple:
    return (o.measure, o.case_version, o.repetition, o.stage, o.subject)


def _named(run: str, o: m.Observation) -> str:
    return (f"run {run}, measure {o.measure}, observation case {o.case_version} repetition {o.repetition} stage {o.stage} "
            f"subject {o.subject!r}")


def _observations(recorded: m.RunResult, fresh: m.RunResult, base: str, at: Locate) -> list[Diagnostic]:
    """Listed observations compared as multisets: one changed in result, reason or detail is named once, as changed."""
    surplus = Counter(recorded.observations) - Counter(fresh.observations)
    lacking = Counter(fresh.observations) - Counter(recorded.observations)
    unmatched: Mapping[tuple, list[m.Observation]] = defaultdict(list)
    for observation in lacking.elements():
        unmatched[_identity(observation)].append(observation)
    found = []
    for position, old in enumerate(recorded.observations):
        if surplus[old] <= 0:
            continue
        surplus[old] -= 1
        pointer = f"{base}/observations/{position}"
        candidates = unmatched.get(_identity(old))
        if candidates:
            new = candidates.pop(0)
            found.append(at(pointer, f"{_named(recorded.run, old)}: {old.result} ({old.reason}: {old.detail}) in the published "
                            f"results, {new.result} ({new.reason}: {new.detail}) re-scored", "verify.observation"))
        else:
            found.append(at(pointer, f"{_named(recorded.run, old)}: {old.result} ({old.reason}) in the published results, "
                            "but re-scoring does not list it", "verify.observation-extra"))
    for left in unmatched.values():
        for new in left:
            found.append(at(f"{base}/observations", f"{_named(recorded.run, new)}: {new.result} ({new.reason}) when re-scored, but "
                            "not listed in the published results", "verify.observation-missing"))
    return found
