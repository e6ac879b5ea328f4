"""Comparisons of two runs verified before, by both runs' verification keys, so a build compares only a run that changed.

A run added compares itself with the previous comparable run; every other comparison is between runs whose inputs did not
change (about 0.1 s each at 1,000 case versions, eight of nine after one run is added). Both keys (verified.VerifiedRuns.key)
name everything the two summaries were made from (sitegen's source, both runs' fields and setups, the cases record, their
answers files and their entries in the results record), so a comparison of the same two keys is the same comparison.
An entry holds the counts and the changes as plain values, carries its own SHA-256 and is shape-checked on every read;
one that fails either is ignored and the two runs are compared afresh (and the entry replaced).
"""

from __future__ import annotations

import hashlib
import marshal
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import Any, Mapping

from sitegen.core import model as m
from sitegen.core.files import framed, read_framed, replace_quietly
from sitegen.score.comparison import Change, Comparison, MeasureDelta, allowed_differences
from sitegen.score.measures.registry import MEASURES

ENTRY_MAGIC = b"sitegen-compared/1\n"


@dataclass(frozen=True)
class ComparedRuns:
    """A folder of comparisons by key, inside a cache folder the caller found marked as sitegen's; `source` is the digest
    of sitegen's own code, which every key includes."""

    root: Path
    source: bytes

    def key(self, key_a: str | None, key_b: str | None, *, regressions_only: bool) -> str | None:
        """The key of comparing the runs verified under `key_a` and `key_b`; None when either cannot be named."""
        if key_a is None or key_b is None:
            return None
        digest = hashlib.sha256(ENTRY_MAGIC + self.source)
        digest.update(marshal.dumps((key_a, key_b, regressions_only), 0))
        return digest.hexdigest()

    def get(self, key: str | None, records: m.Records, a: m.Run, b: m.Run) -> Comparison | None:
        """The comparison of `b` with `a` kept under `key`, or None when there is none or it is not a well-formed entry of
        its own digest."""
        if key is None:
            return None
        data = read_framed(self.root / key, ENTRY_MAGIC)
        if data is None:
            return None
        try:
            measures, changes = marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            return None
        if not (_plain_measures(measures) and _plain_changes(changes)):
            return None
        return Comparison(a.id, b.id, a.setup, b.setup, records.setups[a.setup].fingerprint, records.setups[b.setup].fingerprint,
                          tuple(MeasureDelta(*delta) for delta in measures), tuple(Change(*change) for change in changes),
                          allowed_differences(a, b))

    def put(self, key: str | None, comparison: Comparison) -> None:
        """Keep a comparison (written beside, then renamed); a cache that cannot be written costs only this."""
        if key is None:
            return
        measures = tuple((d.measure, d.before, d.after) for d in comparison.measures)
        changes = tuple((c.measure, c.case_version, c.repetition, c.stage, c.subject, c.before, c.after) for c in comparison.changes)
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(self.root / key, framed(ENTRY_MAGIC, marshal.dumps((measures, changes), 4)))


@dataclass(frozen=True)
class Compared:
    """Comparisons kept in a cache (ComparedRuns), looked up by the verification keys of the two runs (by run id)."""

    records: m.Records
    keys: Mapping[str, str | None]
    kept: ComparedRuns
    regressions_only: bool

    def get(self, a: m.Run, b: m.Run) -> Comparison | None:
        return self.kept.get(self._key(a, b), self.records, a, b)

    def put(self, a: m.Run, b: m.Run, comparison: Comparison) -> None:
        self.kept.put(self._key(a, b), comparison)

    def _key(self, a: m.Run, b: m.Run) -> str | None:
        return self.kept.key(self.keys.get(a.id), self.keys.get(b.id), regressions_only=self.regressions_only)


def _plain_measures(measures: Any) -> bool:
    """Whether counts read back are one (measure, before, after) per measure, in the registry's order."""
    return (type(measures) is tuple and len(measures) == len(MEASURES)
            and all(type(d) is tuple and len(d) == 3 and d[0] == name and _count(d[1]) and _count(d[2])
                    for d, name in zip(measures, MEASURES)))


def _count(value: Any) -> bool:
    return value is None or (type(value) is tuple and len(value) == 2 and all(type(n) is int and n >= 0 for n in value))


def _plain_changes(changes: Any) -> bool:
    """Whether changes read back are tuples of seven strings, each naming one of the registry's measures (the types
    gathered in C: a comparison after a run added can hold tens of thousands)."""
    return (type(changes) is tuple and set(map(type, changes)) <= {tuple} and set(map(len, changes)) <= {7}
            and set(map(type, chain.from_iterable(changes))) <= {str} and {c[0] for c in changes} <= set(MEASURES))
