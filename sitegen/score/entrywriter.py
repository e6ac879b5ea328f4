"""A results entry in canonical form with no Python step per case or observation: the C encoder writes every value.

The layout of an entry is fixed by its fields, so the text between its values is known in advance: a case's lines
depend only on the names of its measures, an observation's on nothing. The writer lists those texts and the values in
order (list repetition and extension, done in C), encodes every value in one call of the C encoder and interleaves the
two. Anything it does not foresee (a value of another type, a pair that is not two values, a key that is not a string)
makes it answer None, and the caller lays the entry out with the general writer, which gives the same bytes.
"""

from __future__ import annotations

import json
from itertools import chain, repeat
from operator import attrgetter

from sitegen.core import model as m

PLAIN = frozenset({str, int, float, bool, type(None)})  # scalars the C encoder writes the same alone or in a container
_PAIRS = frozenset({tuple, list})
_TWO = {2}
# every value of an entry, one per line: the encoder writes no line break inside a string, so ",\n" parts them again
_VALUES = json.JSONEncoder(ensure_ascii=False, check_circular=False, separators=(",\n", ": "))
# one-line containers are written as one list whose items are split apart again (see encode_one_line)
_INLINE = json.JSONEncoder(sort_keys=True, ensure_ascii=False, check_circular=False, separators=(",\n", ": "))
_BOUNDARY = "\x00"  # never in the encoder's output: it writes a NUL in a string as \u0000
encode_string = json.encoder.encode_basestring

_OBSERVATION = attrgetter("case_version", "detail", "measure", "reason", "repetition", "result", "stage", "subject")
_MEASURE = attrgetter("dismissed", "failed", "measure", "observed", "passed", "pending", "state")


def encode_one_line(containers: list[object]) -> list[str]:
    """Each one-line container's JSON, in order, from one call of the C encoder rather than one call per container.

    Their items are separated by ",\n" inside the one list of all of them: the encoder writes no line break inside a
    string, and holding only scalars, a container has "}" or "]" before a separator only where it ends, so those
    separators are the boundaries and every other one becomes the one-line ", ". Each piece is what
    json.dumps(v, sort_keys=True, ensure_ascii=False, separators=(", ", ": ")) gives for it.
    """
    if not containers:
        return []
    text = _INLINE.encode(containers)[1:-1]
    text = text.replace("},\n", "}" + _BOUNDARY).replace("],\n", "]" + _BOUNDARY).replace(",\n", ", ")
    return text.split(_BOUNDARY)


def _encode_values(values: list[object]) -> list[str]:
    """Each scalar's JSON, in order, from one call of the C encoder."""
    return _VALUES.encode(values)[1:-1].split(",\n")


def _row_texts(names: tuple[str, ...]) -> list[str]:
    """The texts before each value of a one-line object with these sorted keys; its closing brace comes after."""
    return ["{" + encode_string(names[0]) + ": "] + [f", {encode_string(n)}: " for n in names[1:]]


_OBSERVATION_TEXTS = _row_texts(("case_version", "detail", "measure", "reason", "repetition", "result", "stage", "subject"))
_MEASURE_TEXTS = _row_texts(("dismissed", "failed", "measure", "observed", "passed", "pending", "state"))


def _rows(out: _Pieces, tail: str, row_texts: list[str], getter, items, indent: str) -> str:
    """A list of one-line objects of fixed keys, one per line at `indent`; returns the text after the last value."""
    if not items:
        return tail + "[]"
    out.texts.append(tail + "[\n" + indent + row_texts[0])
    out.texts += row_texts[1:]
    between = ["},\n" + indent + row_texts[0]] + row_texts[1:]
    for start in range(0, len(items), SEGMENT):
        part = items[start:start + SEGMENT]
        out.texts += between * (len(part) - (start == 0))
        out.values += chain.from_iterable(map(getter, part))
        out.flush()
    return "}\n" + indent[:-2] + "]"


def _case_texts(names: tuple[str, ...], indent: str) -> list[str]:
    """The texts of a case after its case_version: its measures, each a [passed, observed] pair, then the rest."""
    inner = indent + "  "
    state = ",\n" + indent + '"state": '
    if not names:
        return [',\n' + indent + '"measures": {},\n' + indent + '"repetition": ', state]
    texts = [',\n' + indent + '"measures": {\n' + inner + encode_string(names[0]) + ": ["]
    for name in names[1:]:
        texts += [", ", "],\n" + inner + encode_string(name) + ": ["]
    return texts + [", ", "]\n" + indent + "},\n" + indent + '"repetition": ', state]


def _cases(out: _Pieces, tail: str, cases, indent: str) -> str | None:
    """The cases, each over several lines; the text after the last value, or None when a case is not as foreseen."""
    if not cases:
        return tail + "[]"
    texts, values = out.texts, out.values
    inner = indent + "  "
    opening = "{\n" + inner + '"case_version": '
    between = "\n" + indent + "},\n" + indent + opening
    layouts: dict[tuple, tuple[list[str], tuple[str, ...]]] = {}
    pairs: list[object] = []
    texts.append(tail + "[\n" + indent + opening)
    for case in cases:
        measures = case.measures
        names = tuple(measures)
        layout = layouts.get(names)
        if layout is None:
            if not {str}.issuperset(map(type, names)):
                return None
            order = tuple(sorted(names))
            layout = layouts[names] = (_case_texts(order, inner) + [between], order)
        case_texts, order = layout
        texts += case_texts
        chosen = list(map(measures.__getitem__, order))
        pairs += chosen
        values.append(case.case_version)
        values += chain.from_iterable(chosen)
        values.append(case.repetition)
        values.append(case.state)
        if len(values) >= SEGMENT:
            if not _PAIRS.issuperset(map(type, pairs)) or not _TWO.issuperset(map(len, pairs)):
                return None
            pairs.clear()
            out.flush()
    texts.pop()  # the last case has no next one
    if not _PAIRS.issuperset(map(type, pairs)) or not _TWO.issuperset(map(len, pairs)):
        return None
    return "\n" + indent + "}\n" + indent[:-2] + "]"


def _one_line_map(mapping) -> str | None:
    """A mapping of scalars as canonical_json writes it on one line, or None when it holds anything else."""
    value = dict(mapping)
    if not PLAIN.issuperset(map(type, value.values())):
        return None
    return encode_one_line([value])[0]


def _nested_map(mapping, indent: str) -> str | None:
    """A mapping of strings to one-line mappings (a seal's per case version digests), or None when it holds anything else."""
    if not mapping:
        return "{}"
    keys = sorted(mapping)
    if not {str}.issuperset(map(type, keys)):
        return None
    inner = list(map(dict, map(mapping.__getitem__, keys)))
    if not PLAIN.issuperset(map(type, chain.from_iterable(map(dict.values, inner)))):
        return None
    lines = map("".join, zip(repeat(",\n" + indent + "  "), map(encode_string, keys), repeat(": "), encode_one_line(inner)))
    return "{" + "".join(lines)[1:] + "\n" + indent + "}"


def _seal(seal: m.Seal, indent: str) -> str | None:
    """A seal over several lines at `indent`, or None when it holds what the layout does not foresee."""
    inner = indent + "  "
    answers, case_versions = _nested_map(seal.answers, inner), _nested_map(seal.case_versions, inner)
    pairs, run = _one_line_map(seal.pairs), _one_line_map(seal.run)
    if answers is None or case_versions is None or pairs is None or run is None or type(seal.setup_fingerprint) not in PLAIN:
        return None
    return (f'{{\n{inner}"answers": {answers},\n{inner}"case_versions": {case_versions},\n{inner}"pairs": {pairs},\n'
            f'{inner}"run": {run},\n{inner}"setup_fingerprint": {_encode_values([seal.setup_fingerprint])[0]}\n{indent}}}')


class _Pieces:
    """An entry's texts and values being listed (texts[i] stands before values[i]), written out a segment at a time.

    Written out every SEGMENT values, so the listed values, their JSON and the text made of them never grow with a run
    (at 10,000 case versions a run's entry holds about a million values). `ok` turns False at a value that is not a
    plain scalar, and the caller then lays the entry out with the general writer.
    """

    __slots__ = ("texts", "values", "pieces", "ok")

    def __init__(self):
        self.texts: list[str] = []
        self.values: list[object] = []
        self.pieces: list[bytes] = []
        self.ok = True

    def flush(self, tail: str | None = None) -> None:
        """Write out every value listed with the text before it; `tail`, the text after the last value, ends the entry."""
        texts, values = self.texts, self.values
        count = len(values)
        if not PLAIN.issuperset(map(type, values)):
            self.ok = False
        if not self.ok:
            return
        parts: list[str] = [""] * (2 * count)
        parts[0::2] = texts[:count]
        if count:
            parts[1::2] = _encode_values(values)
        del texts[:count]  # in place: the callers hold these lists
        if tail is not None:
            parts += texts
            parts.append(tail)
            texts.clear()
        self.pieces.append("".join(parts).encode("utf-8"))
        values.clear()


SEGMENT = 50_000  # values written out at once


def laid_out_entry(result: m.RunResult, indent: str, before: str) -> list[bytes] | None:
    """`before`, then the entry as canonical_json lays out result_to_json(result) at `indent`, in pieces to be joined;
    None when it holds what the layout does not foresee."""
    inner = indent + "  "
    rows = inner + "  "
    out = _Pieces()
    tail = _cases(out, before + "{\n" + inner + '"cases": ', result.cases, rows)
    if tail is None:
        return None
    out.texts.append(tail + ",\n" + inner + '"matching_method": ')
    out.values.append(result.matching_method)
    tail = _rows(out, ",\n" + inner + '"measures": ', _MEASURE_TEXTS, _MEASURE, result.measures, rows)
    tail = _rows(out, tail + ",\n" + inner + '"observations": ', _OBSERVATION_TEXTS, _OBSERVATION, result.observations, rows)
    out.texts += [tail + ",\n" + inner + '"outcome": ', ",\n" + inner + '"run": ', ",\n" + inner + '"scorer_version": ']
    out.values += [result.outcome, result.run, result.scorer_version]
    tail = ""
    if result.seal is not None:
        seal = _seal(result.seal, inner)
        if seal is None:
            return None
        tail = ",\n" + inner + '"seal": ' + seal
    out.flush(tail + "\n" + indent + "}")
    return out.pieces if out.ok else None
