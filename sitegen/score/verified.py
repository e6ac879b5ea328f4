"""Runs verified before, by the digest of everything verifying them read, so a build re-scores only the runs that changed.

An entry says: the run with these inputs (sitegen's source, the run's fields, its setup, the cases record, the bytes of
every answers file its answers came from, and its entry in the results record, seal included) was scored afresh and
reproduced that entry. It holds what the build needs of that scoring besides the entry itself: the run's summary (for
comparisons with the next comparable run) and its packed reasons (for the pages). An entry carries its own SHA-256 and
is checked on every read; one that fails it, is not of this form, or holds anything but plain data and sitegen's own
reason types is ignored, and the run is verified afresh (and the entry replaced).
"""

from __future__ import annotations

import hashlib
import io
import marshal
import pickle
import zlib
from dataclasses import astuple, dataclass
from pathlib import Path
from itertools import chain
from typing import Any, Iterable, Mapping

from sitegen.core import model as m
from sitegen.core.files import framed, read_framed, replace_quietly
from sitegen.score.reasons import group_of, reason_groups

ENTRY_MAGIC = b"sitegen-verified/1\n"
# What a run's packed reasons may name when read back from a cache: sitegen's own result types and the one function
# that rebuilds a Reason (score/measures/base.py); anything else and the entry is not used.
REASON_GLOBALS = frozenset({
    ("sitegen.core.model", "Observation"), ("sitegen.score.measures.base", "Difference"),
    ("sitegen.score.measures.base", "_reason"), ("sitegen.score.measures.invariant_pairs", "UnexpectedOutput"),
})


@dataclass(frozen=True)
class Known:
    """What a run's verification gave besides reproducing its entry: what comparing it and showing its reasons need."""

    summary: Mapping | None  # comparison.summarize of its observations (None: a CRASHED run)
    reasons: bytes | None  # reasons.pack_reasons of them


@dataclass(frozen=True)
class VerifiedRuns:
    """A folder of verified runs by key, inside a cache folder the caller found marked as sitegen's; `source` is the
    digest of sitegen's own code, which every key includes."""

    root: Path
    source: bytes

    def key(self, records: m.Records, recorded: Any, run: m.Run) -> str | None:
        """The digest of everything verifying `run` reads, or None when it cannot be named without reading it all."""
        entry = getattr(recorded, "digest", None)
        cases = records.files.get("cases.json")
        if entry is None or run.id not in recorded or cases is None or run.setup not in records.setups:
            return None
        files = []
        for source in sorted(_answer_files(records, run.id)):
            file = records.files.get(source)
            if file is None:
                return None
            files.append((source, file.sha256))
        setup = records.setups[run.setup]
        digest = hashlib.sha256(ENTRY_MAGIC + self.source)
        digest.update(marshal.dumps((astuple(run), (setup.id, setup.configuration_json, setup.fingerprint, setup.merge),
                                     cases.sha256, tuple(files), entry(run.id)), 0))  # 0: the values alone decide the bytes
        return digest.hexdigest()

    def get(self, key: str | None) -> Known | None:
        """What the entry under `key` holds, or None when there is none or it is not a well-formed entry of its own digest."""
        if key is None:
            return None
        data = read_framed(self._path(key), ENTRY_MAGIC)
        if data is None:
            return None
        try:
            summary, reasons = marshal.loads(data)
        except (ValueError, EOFError, TypeError):
            return None
        if not (summary is None or _plain_summary(summary)) or not (reasons is None or _plain_reasons(reasons)):
            return None
        return Known(summary, reasons)

    def put(self, key: str | None, known: Known) -> None:
        """Keep a run that reproduced its entry (written beside, then renamed); a cache that cannot be written costs only this."""
        if key is None:
            return
        data = marshal.dumps((known.summary, known.reasons), 4)
        target = self._path(key)
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
        except OSError:
            return
        replace_quietly(target, framed(ENTRY_MAGIC, data))

    def _path(self, key: str) -> Path:
        return self.root / key


def _answer_files(records: m.Records, run_id: str) -> set[str]:
    """The records files the run's answers were read from, without unpacking them."""
    answers = records.answers
    if hasattr(answers, "sources"):
        return set(answers.sources(run_id))
    return {a.source for k, a in answers.items() if k[0] == run_id}


def _plain_summary(summary: Any) -> bool:
    """Whether a summary read back has summarize's form: per measure, per case version its observations flat (four strings
    each), and a count."""
    if type(summary) is not dict:
        return False
    for measure, value in summary.items():
        if type(measure) is not str or type(value) is not tuple or len(value) != 2:
            return False
        index, count = value
        if type(index) is not dict or not (count is None or (type(count) is tuple and all(type(c) is int for c in count))):
            return False
        # the types of every case version, of every flat tuple and of every string in them, gathered in C: a summary holds
        # ~30,000 observations a measure
        if not _only(index, str) or not _only(index.values(), tuple) or not _only(chain.from_iterable(index.values()), str) \
                or any(len(flat) % 4 for flat in index.values()):
            return False
    return True


def _only(values: Iterable[Any], kind: type) -> bool:
    """Whether every value is exactly of this type (none at all counts)."""
    return set(map(type, values)) <= {kind}


class _ReasonReader(pickle.Unpickler):
    """Unpickles only what pack_reasons writes: a pickle naming any other global is refused."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in REASON_GLOBALS:
            raise pickle.UnpicklingError(f"{module}.{name} is not a reason's type")
        return super().find_class(module, name)


def _plain_reasons(reasons: Any) -> bool:
    """Whether packed reasons read back have pack_reasons's form, each group unpickling, naming nothing but REASON_GLOBALS,
    into observations of its measure and chunk and their reasons."""
    if type(reasons) is not bytes:
        return False
    try:
        starts, blobs = reason_groups(reasons)
        if type(starts) is not tuple or not _only(starts, str) or type(blobs) is not dict:
            return False
        for key, blob in blobs.items():
            found = _ReasonReader(io.BytesIO(zlib.decompress(blob))).load()
            if type(found) is not dict or not all(type(k) is m.Observation and group_of(starts, k) == key for k in found):
                return False
    except Exception:  # whatever a malformed entry raises, the entry is only not used
        return False
    return True
