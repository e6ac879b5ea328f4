"""Forked workers: results come back in task order, errors surface, and no more than the allowed tasks are in flight."""

import multiprocessing
import os
import signal
import time

import pytest

from sitegen.core.errors import SitegenError
from sitegen.core.workers import WorkerLost, in_background, ordered_map

def _square(offset: int, task: int) -> tuple[int, int, int]:
    return task, task * task + offset, os.getpid()


def _slow_square(offset: int, task: int) -> tuple[int, int, int]:
    time.sleep(0.01)
    return _square(offset, task)


def _fail(context, task: int) -> int:
    if task == 3:
        raise ValueError("task 3 failed")
    return task


def test_results_come_back_in_task_order_from_other_processes():
    got = list(ordered_map(_square, range(20), jobs=2, context=100))
    assert [g[:2] for g in got] == [(n, n * n + 100) for n in range(20)]
    assert os.getpid() not in {g[2] for g in got}


def test_a_failing_task_raises_in_the_consumer():
    with pytest.raises(ValueError, match="task 3 failed"):
        list(ordered_map(_fail, range(6), jobs=2, context=None))


@pytest.mark.parametrize("here", [False, True])
def test_tasks_are_taken_only_as_results_are_consumed(here):
    """Also with `here`, where this process takes some of the tasks itself."""
    taken: list[int] = []

    def tasks():
        for n in range(100):
            taken.append(n)
            yield n

    results = ordered_map(_slow_square, tasks(), jobs=2, context=0, ahead=3, here=here)
    next(results)
    assert len(taken) <= 4  # three in flight, and the one that waited for room
    results.close()


def test_with_here_the_caller_is_one_of_the_jobs():
    """`here`: two jobs are this process and one forked worker, both taking tasks; results still in task order."""
    got = list(ordered_map(_slow_square, range(40), jobs=2, context=7, here=True))
    assert [g[:2] for g in got] == [(n, n * n + 7) for n in range(40)]
    pids = {g[2] for g in got}
    assert os.getpid() in pids and len(pids) == 2
    alone = list(ordered_map(_square, range(5), jobs=1, context=7, here=True))
    assert [g[:2] for g in alone] == [(n, n * n + 7) for n in range(5)] and {g[2] for g in alone} == {os.getpid()}


def test_with_here_as_a_predicate_the_caller_takes_only_the_tasks_it_accepts():
    """Long tasks go to the workers, short ones are also taken here when the workers are busy; order unchanged."""
    got = list(ordered_map(_slow_square, range(60), jobs=2, context=3, here=lambda task: task % 3 != 0, ahead=8))
    assert [g[:2] for g in got] == [(n, n * n + 3) for n in range(60)]
    ours = {g[0] for g in got if g[2] == os.getpid()}
    assert ours and all(n % 3 != 0 for n in ours), "only accepted tasks, and some of them, ran in this process"
    assert len({g[2] for g in got}) == 2, "one worker forked for two jobs"
    nowhere = list(ordered_map(_square, range(5), jobs=2, context=3, here=lambda task: False))
    assert [g[:2] for g in nowhere] == [(n, n * n + 3) for n in range(5)] and os.getpid() not in {g[2] for g in nowhere}


def _fail_here(parent: int, task: int) -> int:
    if task == 3 and os.getpid() == parent:
        raise ValueError("task 3 failed here")
    if task == 3:
        raise ValueError("task 3 failed in the worker")
    time.sleep(0.01)
    return task


@pytest.mark.parametrize("jobs", [1, 2, 3])
def test_with_here_an_error_is_raised_in_task_order_wherever_the_task_ran(jobs):
    results = ordered_map(_fail_here, range(12), jobs=jobs, context=os.getpid(), here=True)
    assert [next(results) for _ in range(3)] == [0, 1, 2]
    with pytest.raises(ValueError, match="task 3 failed"):
        next(results)
    results.close()


def _scaled(context: dict, task: int) -> tuple[int, int]:
    return task * context["factor"], os.getpid()


def test_each_worker_receives_the_context_it_was_forked_with():
    """One worker mechanism: the context is handed to each forked worker, no module global holds it."""
    got = list(ordered_map(_scaled, range(10), jobs=2, context={"factor": 3}))
    assert [g[0] for g in got] == [n * 3 for n in range(10)]
    assert os.getpid() not in {g[1] for g in got}


def _die(context, task: int) -> int:
    if task == 2:
        os._exit(1)
    return task


def test_a_worker_that_dies_is_reported_instead_of_waited_for():
    from sitegen.core.workers import WorkerLost

    with pytest.raises(WorkerLost, match=r"worker process \d+ ended"):
        list(ordered_map(_die, range(5), jobs=2, context=None))


def _killed(context, task: int) -> int:
    if task == 2:
        os.kill(os.getpid(), signal.SIGKILL)  # as the system ends a process when memory runs out
    return task


def test_a_killed_worker_is_a_typed_error_that_names_the_signal():
    with pytest.raises(WorkerLost) as raised:
        list(ordered_map(_killed, range(5), jobs=2, context=None))
    assert isinstance(raised.value, SitegenError) and raised.value.exit_code == 1
    assert "killed by SIGKILL" in str(raised.value) and "memory" in str(raised.value)
    assert "fewer --jobs" in str(raised.value), "what to do about it: fewer processes, less memory"


def test_a_worker_that_exits_is_reported_with_its_status():
    with pytest.raises(WorkerLost, match=r"exited with status 1$"):
        list(ordered_map(_die, range(5), jobs=2, context=None))


def test_background_work_killed_is_reported_where_its_result_is_asked_for():
    with in_background(_killed, 2, context=None) as result:
        with pytest.raises(WorkerLost, match=r"ended before it returned its result: it was killed by SIGKILL"):
            result()
    assert not multiprocessing.active_children()


def _squares_forking(offset: int, tasks: list[int]) -> tuple[list, int]:
    """Forks workers of its own, as verifying a build's runs in the background does."""
    return [n for _, n, _ in ordered_map(_square, tasks, jobs=2, context=offset)], os.getpid()


def test_work_in_the_background_runs_in_another_process_that_may_fork_its_own():
    with in_background(_squares_forking, [1, 2, 3], context=10) as result:
        squares, pid = result()
        assert result() == (squares, pid), "asked twice, the same result"
    assert squares == [11, 14, 19] and pid != os.getpid()


def test_an_error_in_the_background_is_raised_where_the_result_is_asked_for():
    with in_background(_fail, 3, context=None) as result:
        with pytest.raises(ValueError, match="task 3 failed"):
            result()
    with in_background(_fail, 2, context=None) as result:
        assert result() == 2


def test_background_work_never_asked_for_is_ended_with_the_block():
    with pytest.raises(KeyError):
        with in_background(_sleep, 60, context=None):
            raise KeyError("the caller failed first")
    assert not multiprocessing.active_children()


def _sleep(context, seconds: int) -> int:
    time.sleep(seconds)
    return seconds


# A process that forks workers, says their process ids, and is then killed outright (as the system kills the largest
# process when memory runs out): its workers must notice and end, not wait for ever holding memory and its output pipe.
_KILLED_PARENT = r"""
import os, signal, sys
from sitegen.core.workers import in_background, ordered_map

def pid(context, task):
    return os.getpid()

def nested(context, task):  # as the build verifies: a background process with workers of its own
    return sorted(set(ordered_map(pid, range(8), jobs=2, context=None)))

mode = sys.argv[1]
if mode == "map":
    results = ordered_map(pid, range(8), jobs=2, context=None)
    workers = sorted({next(results) for _ in range(4)})  # the map suspended with both workers waiting for tasks
elif mode == "background":
    with in_background(pid, None, context=None) as result:
        workers = [result()]  # it waits for the word to stop
        print(*workers, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
else:
    with in_background(nested, None, context=None) as result:
        workers = result()
        print(*workers, flush=True)
        os.kill(os.getpid(), signal.SIGKILL)
print(*workers, flush=True)
os.kill(os.getpid(), signal.SIGKILL)
"""


def _ended(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] in ("Z", "X")  # a zombie has ended; only its entry is left
    except FileNotFoundError:
        return True


@pytest.mark.parametrize("mode", ["map", "background", "nested"])
def test_workers_end_when_their_parent_is_killed(mode):
    import subprocess
    import sys

    child = subprocess.Popen([sys.executable, "-c", _KILLED_PARENT, mode], stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        # the workers share the parent's output: reading it to the end waits for every one of them to be gone
        out, _ = child.communicate(timeout=30)
    finally:
        try:
            os.killpg(child.pid, signal.SIGKILL)  # whatever is left of the group, when the test fails
        except ProcessLookupError:
            pass
    assert child.returncode == -signal.SIGKILL
    workers = [int(p) for p in out.split()]
    assert workers and child.pid not in workers
    deadline = time.monotonic() + 10
    while not all(map(_ended, workers)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert all(map(_ended, workers)), f"workers {workers} still running after their parent was killed"


def _deaf_to_sigterm(context, task: int) -> int:
    signal.signal(signal.SIGTERM, signal.SIG_IGN)  # as a worker is when SIGTERM reached it right after its fork (lost)
    return task


def test_workers_that_miss_sigterm_still_end_when_the_consumer_stops():
    """Stopping early (a build told to stop, an error while writing) terminates the workers and waits for them: one that
    missed its SIGTERM must end all the same once idle, not leave its parent waiting for ever."""
    def too_long(signum, frame):  # not an OSError, which waiting for a process takes for "not created yet"
        raise AssertionError("the consumer waited for a worker that never ended")

    previous = signal.signal(signal.SIGALRM, too_long)
    signal.alarm(30)
    try:
        results = ordered_map(_deaf_to_sigterm, range(8), jobs=2, context=None)
        assert next(results) == 0
        results.close()  # as a consumer stopped by an exception does
        assert multiprocessing.active_children() == []
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
        for child in multiprocessing.active_children():
            child.kill()
