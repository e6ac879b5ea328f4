"""The process's memory policy (core/memory.py): a large buffer freed goes back to the system, and the command sets it."""

import platform
import subprocess
import sys

import pytest

from sitegen import cli

GLIBC = sys.platform.startswith("linux") and platform.libc_ver()[0] == "glibc"

# A 20 MiB buffer freed (glibc then takes such buffers from its heap), then twenty 16 MiB buffers each freed after a small
# buffer that stays was made: prints how many MiB the process kept beyond those that stay.
_PROBE = """
import sys
from sitegen.core.memory import give_back_large_buffers
def resident():
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * 4096 / 2**20
applied = give_back_large_buffers() if sys.argv[1] == "policy" else False
before = resident()
first = bytes(20 << 20)
del first
kept = []
for _ in range(20):
    large = b"x" * (16 << 20)
    kept.append(b"y" * (300 << 10))
    del large
print(applied, round(resident() - before - sum(map(len, kept)) / 2**20))
"""


def _kept_beyond(mode: str) -> tuple[str, int]:
    done = subprocess.run([sys.executable, "-c", _PROBE, mode], capture_output=True, text=True, check=True)
    applied, extra = done.stdout.split()
    return applied, int(extra)


@pytest.mark.skipif(not GLIBC, reason="the policy is glibc's mallopt; elsewhere it does nothing and says so")
def test_a_large_buffer_freed_goes_back_to_the_system():
    applied, extra = _kept_beyond("policy")
    assert applied == "True"
    assert extra < 8, f"{extra} MiB of freed buffers stayed in the process"
    # without the policy the same steps keep a freed 16 MiB buffer: the probe can tell the two apart
    applied, extra = _kept_beyond("default")
    assert applied == "False" and extra >= 12


def test_the_command_sets_the_policy_once_before_any_work(monkeypatch):
    calls = []
    monkeypatch.setattr(cli, "give_back_large_buffers", lambda: calls.append("policy"))
    monkeypatch.setattr(cli, "main", lambda argv=None: calls.append("work") or 0)
    with pytest.raises(SystemExit) as stopped:
        cli.main_entry()
    assert stopped.value.code == 0
    assert calls == ["policy", "work"]


def test_a_library_function_never_sets_it():
    """Process-wide, so the command line's entry alone calls it (the architecture tests check who imports it)."""
    import ast
    from pathlib import Path

    package = Path(cli.__file__).resolve().parent
    callers = sorted(str(path.relative_to(package)) for path in package.rglob("*.py")
                     if any(isinstance(node, ast.Name) and node.id == "give_back_large_buffers"
                            or isinstance(node, ast.Attribute) and node.attr == "give_back_large_buffers"
                            or isinstance(node, ast.alias) and node.name == "give_back_large_buffers"
                            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))))
    assert callers == ["cli.py"]
