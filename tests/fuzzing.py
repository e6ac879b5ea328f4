"""Mutations of the small records, for the fuzz test and the fuzz campaign: hostile values put into the JSON's structure,
and bytes cut, doubled or inserted in its text. A chooser picks each choice, so Hypothesis and random.Random can drive it."""

from __future__ import annotations

import json
import re
import shutil
import signal
import sys
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from io import StringIO
from pathlib import Path
from typing import Callable, Sequence

SMALL = Path(__file__).parent / "data" / "records-small"
FILES = tuple(sorted(p.relative_to(SMALL).as_posix() for p in SMALL.rglob("*") if p.is_file()))

# Values a publisher's tools, a broken export or an attacker might leave in any place of a record.
# The nastiest come first: Hypothesis draws small indexes more often.
HOSTILE_VALUES: tuple[object, ...] = (
    "\ud800", 10**20, "a\udfffb", "r1\n", "index", None, True, False, 0, -1, 1, 2, 3, 101, -(10**20), 10**400, 1.5, 1e308,
    -0.0, "", " ", "\n", "con", "NUL.json", "schemas", "SHA256SUMS", "../x.json", "changelog/../../x.json", "/etc/passwd",
    "a..b", "x" * 300, "x" * 100_001, "\u202e\u200b\u0000\u0007\u001b[31m", "<script>alert(1)</script>", "https://[::1",
    "2026-02-30", "2026-13-01", "0" * 64, "R-ATGARD-2", "leak-unchecked", "r2", [], {}, [[]], {"merge": True}, [1, 2], [2, 1],
    [1, 10**9], {"lines": [1, 1]}, {"quote": "Läckan är åtgärdad."},
)
# Bytes to splice into a file's text.
HOSTILE_BYTES: tuple[bytes, ...] = (
    b"[" * 5000, b"source: https://[::1\n", b"\\ud800", b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00", b"\x1b", b"[", b"]",
    b"{", b"}", b'"', b",", b":", b"\\", b"NaN", b"1e999", b"9" * 5000, b"\n", b"\r\n", b"\xef\xbb\xbf", b'{"a":' * 3000,
    b"---\n",
)

Choose = Callable[[int], int]  # choose(n): an index in range(n)


@dataclass(frozen=True)
class Mutation:
    """What was done to which file, to be shown when a mutation breaks the build."""

    file: str
    description: str


def _places(value: object, path: tuple = ()) -> list[tuple]:
    """Every place in a JSON value, as a path of keys and indexes; the root is ()."""
    found = [path]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _places(item, path + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _places(item, path + (index,))
    return found


def _at(value: object, path: tuple) -> object:
    for step in path:
        value = value[step]
    return value


def _structural(data: bytes, choose: Choose) -> tuple[bytes, str] | None:
    try:
        value = json.loads(data)
    except (ValueError, RecursionError):  # not JSON (any more): the textual mutations take it
        return None
    places = [p for p in _places(value) if p]
    if not places:
        return None
    place = places[choose(len(places))]
    parent, key = _at(value, place[:-1]), place[-1]
    operation = choose(5)
    if operation == 0:
        new = HOSTILE_VALUES[choose(len(HOSTILE_VALUES))]
        parent[key] = new
        done = f"{place} = {new!r:.60}"
    elif operation == 1:
        del parent[key]
        done = f"del {place}"
    elif operation == 2 and isinstance(parent, list):
        parent.insert(key, json.loads(json.dumps(parent[key])))
        done = f"{place} doubled"
    elif operation == 3 and isinstance(parent, dict):
        parent[f"{key}_x"] = parent[key]
        done = f"{place} beside an unknown field"
    else:
        other = places[choose(len(places))]
        parent[key] = json.loads(json.dumps(_at(value, other)))
        done = f"{place} = the value at {other}"
    ascii_only = choose(2) == 0
    text = json.dumps(value, ensure_ascii=ascii_only, indent=2 if choose(2) else None)
    return text.encode("utf-8", "surrogatepass"), f"structural: {done}"


def _textual(data: bytes, choose: Choose) -> tuple[bytes, str]:
    if not data:
        return HOSTILE_BYTES[choose(len(HOSTILE_BYTES))], "textual: empty file filled"
    start = choose(len(data) + 1)
    end = min(len(data), start + choose(64))
    operation = choose(4)
    if operation == 0:
        return data[:start], f"textual: cut at {start}"
    if operation == 1:
        return data[:start] + data[end:], f"textual: bytes {start}-{end} deleted"
    if operation == 2:
        return data[:end] + data[start:], f"textual: bytes {start}-{end} doubled"
    inserted = HOSTILE_BYTES[choose(len(HOSTILE_BYTES))]
    return data[:start] + inserted + data[start:], f"textual: {inserted[:20]!r} inserted at {start}"


def mutate(root: Path, choose: Choose, *, count: int) -> tuple[Mutation, ...]:
    """Apply `count` mutations to the records copied at root (structural where the file is JSON, else textual)."""
    done = []
    for _ in range(count):
        name = FILES[choose(len(FILES))]
        path = root / name
        data = path.read_bytes()
        changed = _structural(data, choose) if name.endswith(".json") and choose(2) else None
        if changed is None:
            changed = _textual(data, choose)
        path.write_bytes(changed[0])
        done.append(Mutation(name, changed[1]))
    return tuple(done)


class Hang(Exception):
    """A build ran past its time limit."""


@contextmanager
def time_limit(seconds: int):
    """SIGALRM after `seconds`: a hang shows as an error in this process, which is only ever the main thread of a test."""
    def expire(signum, frame):
        raise Hang(f"no answer after {seconds} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.alarm(seconds)
    try:
        yield
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)


LINE = re.compile(r"^(?:\S[^\n]*?: )?(?:error|note): .+ \[[a-z][a-z0-9.-]+\]$")


@dataclass(frozen=True)
class Outcome:
    code: int
    stderr: str


def mutated_copy(workdir: Path, choose: Choose, *, count: int) -> tuple[Mutation, ...]:
    """The small records copied to workdir/records and mutated."""
    root = workdir / "records"
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(SMALL, root)
    return mutate(root, choose, count=count)


def build(workdir: Path, *, seconds: int = 120) -> Outcome:
    """`sitegen build` of workdir/records through cli.main: the exit code and what it printed.

    Anything but a return from main (another exception, a hang) propagates to the caller.
    """
    from sitegen.cli import main

    root = workdir / "records"
    out, err = StringIO(), StringIO()
    with time_limit(seconds), redirect_stdout(out), redirect_stderr(err):
        code = main(["build", "--records", str(root), "--out", str(workdir / "site"), "--quiet"])
    return Outcome(code, err.getvalue())


def problems_with(outcome: Outcome) -> list[str]:
    """Why an outcome is not clean: exit 0, or exit 2 with nothing but printable diagnostics of the documented form."""
    found = []
    if outcome.code not in (0, 2):
        found.append(f"exit {outcome.code}")
    try:
        outcome.stderr.encode("utf-8")
    except UnicodeEncodeError:
        found.append("unprintable output")
    if outcome.code == 2:
        lines = outcome.stderr.splitlines()
        if not lines:
            found.append("exit 2 with nothing said")
        found += [f"not a diagnostic: {line[:200]!r}" for line in lines if not LINE.match(line)]
    return found


def main(argv: Sequence[str]) -> int:  # pragma: no cover (the campaign: python tests/fuzzing.py N [SEED])
    import random
    import tempfile
    import time
    import traceback

    total = int(argv[0]) if argv else 1000
    seed = int(argv[1]) if len(argv) > 1 else 13
    rng = random.Random(seed)
    counts = {"clean exit 0": 0, "clean exit 2": 0, "unclean": 0, "exception": 0, "hang": 0}
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as tmp:
        for number in range(total):
            workdir = Path(tmp) / f"m{number}"
            workdir.mkdir()
            mutations = mutated_copy(workdir, rng.randrange, count=rng.randint(1, 3))
            try:
                outcome = build(workdir)
            except Hang:
                counts["hang"] += 1
                print(f"#{number} HANG {mutations}", file=sys.stderr)
                continue
            except Exception:  # noqa: BLE001 (counted and shown: that is the point of the campaign)
                counts["exception"] += 1
                print(f"#{number} EXCEPTION {mutations}\n{traceback.format_exc(limit=-3)}", file=sys.stderr)
                continue
            finally:
                shutil.rmtree(workdir, ignore_errors=True)
            found = problems_with(outcome)
            if found:
                counts["unclean"] += 1
                print(f"#{number} UNCLEAN {found[:3]} {mutations}", file=sys.stderr)
            else:
                counts["clean exit 0" if outcome.code == 0 else "clean exit 2"] += 1
    elapsed = time.monotonic() - started
    print(f"{total} mutated record sets (seed {seed}) in {elapsed:.0f} s: " + ", ".join(f"{k} {v}" for k, v in counts.items()))
    return 0 if counts["unclean"] == counts["exception"] == counts["hang"] == 0 else 1


if __name__ == "__main__":  # pragma: no cover
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
    sys.exit(main(sys.argv[1:]))
