"""The structured reasons of recorded observations, derived again by the measures: results.json keeps only the English detail.

The results record is never rewritten, and an Observation read back from it must equal a freshly scored one, so the
structured reason (Observed.why) is not stored there. The build's verifying pass, which observes every published run
anyway, keeps each run's reasons packed (pack_reasons) for the pages; without them (pages rendered from results alone)
the measures judge just the case versions a page shows again, with the run's own scorer version (derive_reasons).
"""

from __future__ import annotations

import pickle
import zlib
from dataclasses import replace
from types import MappingProxyType
from typing import Iterable, Mapping

from sitegen.core import model as m
from sitegen.score.matching import method_for
from sitegen.score.measures.base import Observed, Reason, judge_run
from sitegen.score.measures.registry import MEASURE_FUNCTIONS
from sitegen.score.scoring import run_crashed


def derive_reasons(records: m.Records, run_id: str, case_versions: Iterable[str]) -> Mapping[m.Observation, Reason]:
    """Every observation of these case versions in this run that did not plainly pass, with its structured reason.

    Each measure observes a case version (an invariance pair: both its versions) on its own, so scoring the suite
    narrowed to them gives exactly their observations of the whole run. A pair is kept when either version is asked for.
    """
    run = records.run(run_id)
    wanted = set(case_versions)
    if not wanted or run_crashed(records, run):
        return MappingProxyType({})
    for pair in records.pairs:
        if wanted.intersection(pair.versions):
            wanted.update(pair.versions)
    suite = records.suite(run.suite, run.suite_version)
    narrowed = replace(suite, case_versions=tuple(cv for cv in suite.case_versions if cv in wanted))
    judged = judge_run(replace(records, suites=tuple(narrowed if s is suite else s for s in records.suites)), run,
                       method_for(run.scorer_version))
    found: dict[m.Observation, Reason] = {}
    for function in MEASURE_FUNCTIONS.values():
        for obs in function(judged, listed=False):
            if type(obs) is Observed and obs.why is not None:
                found[observation_of(obs)] = obs.why
    return MappingProxyType(found)


def pack_reasons(observed: Mapping[str, Iterable[Observed]]) -> bytes:
    """A run's reasons, from all its observations (observe_run), as bytes: small to keep and to send between processes."""
    found = {observation_of(obs): obs.why for items in observed.values() for obs in items if obs.why is not None}
    # ids repeat throughout: compressed they take about a ninth (1,000 case versions: 0.87 MB a run, 0.10 MB compressed)
    return zlib.compress(pickle.dumps(found, protocol=pickle.HIGHEST_PROTOCOL), 1)


def unpack_reasons(packed: bytes) -> dict[m.Observation, Reason]:
    """What pack_reasons packed."""
    return pickle.loads(zlib.decompress(packed))


def observation_of(obs: Observed) -> m.Observation:
    """The Observation the results record holds for an observation (its public fields), to look reasons up by."""
    return m.Observation(obs.measure, obs.case_version, obs.repetition, obs.stage, obs.subject, obs.result, obs.reason,
                         obs.detail)


class ReasonSource:
    """The reasons of one run's observations: unpacked from what the verifying pass kept, or else derived per case version
    when a page first needs them; kept for the run at hand only, so a new run lets the previous run's reasons go.

    A process renders a run's own pages and its case pages one after the other, so each run is unpacked (or each case
    version judged again) at most once per process.
    """

    def __init__(self, records: m.Records, packed: Mapping[str, bytes] | None = None):
        self._records = records
        self._packed = packed or {}
        self._run: str | None = None
        self._done: set[str] = set()
        self._reasons: dict[m.Observation, Reason] = {}

    def reasons(self, run_id: str, observations: Iterable[m.Observation]) -> Mapping[m.Observation, Reason]:
        """The structured reason of each of these recorded observations of the run (one the scorer cannot give is left out)."""
        observations = tuple(observations)
        if run_id != self._run:
            self._run, self._done = run_id, set()
            self._reasons = unpack_reasons(self._packed[run_id]) if run_id in self._packed else {}
        if run_id not in self._packed:
            missing = {o.case_version for o in observations} - self._done
            if missing:
                self._reasons.update(derive_reasons(self._records, run_id, missing))
                self._done |= missing
        return MappingProxyType({o: self._reasons[o] for o in observations if o in self._reasons})
