"""The swap is atomic for a reader: builds killed at any moment leave a whole site at --out, and the next build sweeps up."""

from __future__ import annotations

import fcntl
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

import sitegen.publish.swap as swap_module
from sitegen.build import build_site
from sitegen.publish.site import MARKER, is_site

SMALL = Path(__file__).parent / "data" / "records-small"
KILLS = 24


def tree(folder: Path) -> dict[str, bytes]:
    return {p.relative_to(folder).as_posix(): p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file()}


def leftovers(parent: Path) -> list[str]:
    return sorted(p.name for p in parent.iterdir() if p.name.startswith((".site.tmp-", ".site.old-")))


def _build_command(records: Path, out: Path) -> list[str]:
    return [sys.executable, "-m", "sitegen", "build", "--records", str(records), "--out", str(out), "--quiet"]


@pytest.fixture
def workspace(tmp_path):
    records = tmp_path / "records"
    shutil.copytree(SMALL, records)
    return tmp_path, records, tmp_path / "site"


def test_builds_killed_at_many_moments_always_leave_a_whole_site_and_the_next_build_sweeps_up(workspace):
    tmp_path, records, out = workspace
    started = time.monotonic()
    subprocess.run(_build_command(records, out), cwd=tmp_path, check=True)
    duration = time.monotonic() - started
    reference = tree(out)
    assert MARKER in reference and "downloads/SHA256SUMS" in reference
    left_something = 0
    for kill in range(KILLS):
        build = subprocess.Popen(_build_command(records, out), cwd=tmp_path)
        time.sleep(duration * (0.1 + 1.0 * kill / KILLS))  # spread over the whole build, its last phase (writing) included
        build.send_signal(signal.SIGKILL)
        build.wait()
        assert tree(out) == reference, f"kill {kill + 1}: the site at --out is whole, every byte"
        left_something += bool(leftovers(tmp_path))
    subprocess.run(_build_command(records, out), cwd=tmp_path, check=True)
    assert leftovers(tmp_path) == [], "the next build swept every folder killed builds left"
    assert tree(out) == reference
    print(f"{KILLS} builds killed, {KILLS} left a whole site, {left_something} left folders that the next build swept")


# Run in a subprocess: the build is killed right after the step that moves the old site, the one moment the two-rename
# swap had no site at --out.
_KILL_AFTER_THE_SWAP = textwrap.dedent("""
    import os, signal, sys
    import sitegen.publish.swap as swap
    real_rename, real_exchange = os.rename, swap.exchange
    fallback = sys.argv[1] == "fallback"

    def rename(src, dst):
        real_rename(src, dst)
        if os.path.basename(str(src)) == "site":
            os.kill(os.getpid(), signal.SIGKILL)

    def exchange(a, b):
        if fallback:
            return False
        done = real_exchange(a, b)
        os.kill(os.getpid(), signal.SIGKILL)

    os.rename, swap.exchange = rename, exchange
    from sitegen.cli import main
    sys.exit(main(sys.argv[2:]))
""")


def _killed_at_the_swap(tmp_path: Path, records: Path, out: Path, mode: str) -> int:
    return subprocess.run([sys.executable, "-c", _KILL_AFTER_THE_SWAP, mode, "build", "--records", str(records), "--out", str(out),
                           "--quiet"], cwd=tmp_path).returncode


def test_a_build_killed_just_after_the_swap_leaves_the_new_site_and_the_next_build_sweeps_the_old(workspace):
    tmp_path, records, out = workspace
    build_site(records, out)
    reference = tree(out)
    assert _killed_at_the_swap(tmp_path, records, out, "exchange") == -signal.SIGKILL
    assert tree(out) == reference, "a whole site at --out"
    assert len(leftovers(tmp_path)) == 1 and is_site(tmp_path / leftovers(tmp_path)[0]), "the old site, where the new one was staged"
    build_site(records, out)
    assert leftovers(tmp_path) == [] and tree(out) == reference


def test_without_an_exchange_a_build_killed_between_the_renames_gets_its_old_site_back_first(workspace):
    tmp_path, records, out = workspace
    build_site(records, out)
    reference = tree(out)
    assert _killed_at_the_swap(tmp_path, records, out, "fallback") == -signal.SIGKILL
    assert not out.exists(), "the fallback's one window: the old site is put aside"
    assert swap_module.sweep(out), "the sweep found the killed build's folders"
    assert tree(out) == reference, "the old site is back, whole"
    assert leftovers(tmp_path) == []


def test_the_fallback_swap_replaces_the_site_when_the_system_cannot_exchange(workspace, monkeypatch):
    tmp_path, records, out = workspace
    build_site(records, out)
    (out / "en" / "stale.html").write_bytes(b"from an older build")
    monkeypatch.setattr(swap_module, "exchange", lambda a, b: False)
    build_site(records, out)
    assert not (out / "en" / "stale.html").exists() and is_site(out)
    assert leftovers(tmp_path) == []


def test_exchange_swaps_two_folders_in_one_step(tmp_path):
    (tmp_path / "a").mkdir()
    (tmp_path / "a" / "x").write_bytes(b"a")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "x").write_bytes(b"b")
    if not swap_module.exchange(tmp_path / "a", tmp_path / "b"):
        pytest.skip("this system or file system cannot exchange; the fallback is tested above")
    assert (tmp_path / "a" / "x").read_bytes() == b"b" and (tmp_path / "b" / "x").read_bytes() == b"a"


def test_a_folder_a_running_build_holds_is_not_swept(workspace):
    tmp_path, records, out = workspace
    killed = tmp_path / ".site.tmp-killed1"
    (killed / "en").mkdir(parents=True)
    (killed / "en" / "index.html").write_bytes(b"half a site")
    aside = tmp_path / ".site.old-killed2"
    aside.mkdir()
    running = tmp_path / ".site.tmp-running"
    running.mkdir()
    unrelated = tmp_path / ".other.tmp-x"
    unrelated.mkdir()
    fd = os.open(running, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        build_site(records, out)
        assert leftovers(tmp_path) == [".site.tmp-running"], "the killed builds' folders went, the running one's stayed"
        assert unrelated.is_dir(), "a folder of another name is never touched"
    finally:
        os.close(fd)


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_an_old_site_is_deleted_whole_by_threads_without_following_a_link(tmp_path, jobs):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "kept.html").write_bytes(b"not the site's")
    old = tmp_path / "old"
    for shard in range(5):
        for case in range(7):
            folder = old / "sv" / "cases" / f"s{shard}" / f"case-{case}"
            folder.mkdir(parents=True)
            for run in range(3):
                (folder / f"run-{run}.html").write_bytes(b"page")
    (old / "index.html").write_bytes(b"index")
    (old / "sv" / "cases" / "s0" / "elsewhere").symlink_to(outside, target_is_directory=True)
    (old / "sv" / "linked.html").symlink_to(outside / "kept.html")
    assert len(swap_module._subfolders(old, wanted=16 * jobs)) >= min(16 * jobs, 35)
    swap_module.remove_tree(old, jobs=jobs)
    assert not os.path.lexists(old)
    assert (outside / "kept.html").read_bytes() == b"not the site's"


def test_an_old_site_deleted_meanwhile_is_gone_when_the_block_is_left_also_when_it_fails(tmp_path):
    for name in ("first", "second"):
        folder = tmp_path / name / "sv" / "cases"
        folder.mkdir(parents=True)
        for n in range(50):
            (folder / f"case-{n}.html").write_bytes(b"page")
    with swap_module.removed_meanwhile(tmp_path / "first", jobs=2):
        kept = (tmp_path / "second" / "sv" / "cases" / "case-0.html").read_bytes()
    assert kept == b"page" and not os.path.lexists(tmp_path / "first")
    with pytest.raises(KeyError):
        with swap_module.removed_meanwhile(tmp_path / "second", jobs=2):
            raise KeyError("the block failed")
    assert not os.path.lexists(tmp_path / "second")
