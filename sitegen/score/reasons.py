"""The structured reasons of recorded observations, derived again by the measures: results.json keeps only the English detail.

The results record is never rewritten, and an Observation read back from it must equal a freshly scored one, so the
structured reason (Observed.why) is not stored there. The build's verifying pass, which observes every published run
anyway, keeps each run's reasons packed (pack_reasons) for the pages; without them (pages rendered from results alone)
the measures judge just the case versions a page shows again, with the run's own scorer version (derive_reasons).
"""

from __future__ import annotations

import marshal
import pickle
import zlib
from bisect import bisect_right
from collections import OrderedDict
from types import MappingProxyType
from typing import Iterable, Mapping

from sitegen.core import model as m
from sitegen.score.matching import method_for
from sitegen.score.measures.base import Observed, Reason, judge_run
from sitegen.score.measures.registry import MEASURE_FUNCTIONS
from sitegen.score.scoring import run_crashed


def derive_reasons(records: m.Records, run_id: str, case_versions: Iterable[str]) -> Mapping[m.Observation, Reason]:
    """Every observation of these case versions in this run that did not plainly pass, with its structured reason.

    Each measure observes a case version (an invariance pair: both its versions) on its own, so judging only them
    (judge_run's `only`) gives exactly their observations of the whole run. A pair is kept when either version is asked for.
    """
    run = records.run(run_id)
    wanted = set(case_versions)
    if not wanted or run_crashed(records, run):
        return MappingProxyType({})
    for pair in records.pairs:
        if wanted.intersection(pair.versions):
            wanted.update(pair.versions)
    judged = judge_run(records, run, method_for(run.scorer_version), only=wanted)
    found: dict[m.Observation, Reason] = {}
    for function in MEASURE_FUNCTIONS.values():
        for obs in function(judged, listed=False):
            if type(obs) is Observed and obs.why is not None:
                found[observation_of(obs)] = obs.why
    return MappingProxyType(found)


REASON_CHUNK = 64  # case versions per packed group: a page unpacks the few groups it shows, not the whole run


def pack_reasons(observed: Iterable[Observed]) -> bytes:
    """A run's reasons, from its observations (observe_run's, of every measure), as bytes: small to keep and to send
    between processes.

    Grouped by measure and by REASON_CHUNK case versions in sorted order, each group pickled and compressed on its own,
    so that a page (one case version's, or a page of one measure's list) unpacks a few groups and not the whole run
    (at 10,000 case versions a run's reasons unpacked take about 43 MiB in each process that shows them).
    """
    found = {observation_of(obs): obs.why for obs in observed if obs.why is not None}
    versions = sorted({o.case_version for o in found})
    starts = tuple(versions[i] for i in range(0, len(versions), REASON_CHUNK))
    groups: dict[tuple[str, int], dict[m.Observation, Reason]] = {}
    for obs, why in found.items():
        groups.setdefault(group_of(starts, obs), {})[obs] = why
    # ids repeat throughout a group: compressed they take about a sixth (1,000 case versions: 0.84 MB a run, 0.13 MB packed,
    # against 0.09 MB packed as one group: the price of unpacking only what a page shows)
    blobs = {key: zlib.compress(pickle.dumps(groups[key], protocol=pickle.HIGHEST_PROTOCOL), 1) for key in sorted(groups)}
    return marshal.dumps((starts, blobs), 4)


def unpack_reasons(packed: bytes) -> dict[m.Observation, Reason]:
    """Every reason pack_reasons packed."""
    found: dict[m.Observation, Reason] = {}
    for blob in reason_groups(packed)[1].values():
        found.update(_unpacked_group(blob))
    return found


def reason_groups(packed: bytes) -> tuple[tuple[str, ...], dict[tuple[str, int], bytes]]:
    """The packed form's parts: the first case version of each chunk, and each group's compressed pickle by (measure, chunk)."""
    starts, blobs = marshal.loads(packed)
    return starts, blobs


def _unpacked_group(blob: bytes) -> dict[m.Observation, Reason]:
    """One group's reasons, as pack_reasons compressed them."""
    return pickle.loads(zlib.decompress(blob))


def group_of(starts: tuple[str, ...], obs: m.Observation) -> tuple[str, int]:
    """The group an observation is packed in: its measure, and the chunk its case version falls in."""
    return obs.measure, bisect_right(starts, obs.case_version) - 1


def observation_of(obs: Observed) -> m.Observation:
    """The Observation the results record holds for an observation (its public fields), to look reasons up by."""
    return m.Observation(obs.measure, obs.case_version, obs.repetition, obs.stage, obs.subject, obs.result, obs.reason,
                         obs.detail)


class ReasonSource:
    """The reasons of one run's observations: unpacked group by group from what the verifying pass kept, or else derived
    per case version when a page first needs them; kept for the run at hand only, so a new run lets the previous run's
    reasons go.

    A process renders a run's own pages (a measure's list goes through its case versions in order) and its case pages
    (in order too) one after the other, so each group is unpacked about once per process, and only the last `keep`
    groups are held; reasons derived again (no packed reasons) are kept for the run at hand.
    """

    def __init__(self, records: m.Records, packed: Mapping[str, bytes] | None = None, keep: int = 32):
        self._records = records
        self._packed = packed or {}
        self._keep = keep
        self._run: str | None = None
        self._done: set[str] = set()
        self._reasons: dict[m.Observation, Reason] = {}
        self._parts: tuple[tuple[str, ...], dict[tuple[str, int], bytes]] = ((), {})
        self._groups: OrderedDict[tuple[str, int], dict[m.Observation, Reason]] = OrderedDict()

    def reasons(self, run_id: str, observations: Iterable[m.Observation]) -> Mapping[m.Observation, Reason]:
        """The structured reason of each of these recorded observations of the run (one the scorer cannot give is left out)."""
        observations = tuple(observations)
        if run_id != self._run:
            self._run, self._done, self._reasons = run_id, set(), {}
            self._parts = reason_groups(self._packed[run_id]) if run_id in self._packed else ((), {})
            self._groups.clear()
        if run_id in self._packed:
            found = {}
            for obs in observations:
                why = self._group(group_of(self._parts[0], obs)).get(obs)
                if why is not None:
                    found[obs] = why
            return MappingProxyType(found)
        missing = {o.case_version for o in observations} - self._done
        if missing:
            self._reasons.update(derive_reasons(self._records, run_id, missing))
            self._done |= missing
        return MappingProxyType({o: self._reasons[o] for o in observations if o in self._reasons})

    def _group(self, key: tuple[str, int]) -> Mapping[m.Observation, Reason]:
        """One group of the run at hand unpacked; only the last `keep` stay (pages go through a run's case versions in order)."""
        found = self._groups.get(key)
        if found is not None:
            self._groups.move_to_end(key)
            return found
        blob = self._parts[1].get(key)
        found = _unpacked_group(blob) if blob is not None else {}
        self._groups[key] = found
        while len(self._groups) > self._keep:
            self._groups.popitem(last=False)
        return found
