"""Forked worker processes that hand results back in order and never run far ahead of whoever consumes them."""

from __future__ import annotations

import multiprocessing
import signal
from collections import deque
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from multiprocessing.connection import wait
from typing import Any, Callable, Iterable, Iterator

from sitegen.core.errors import SitegenError


class WorkerLost(SitegenError):
    """A worker process ended before it returned the result of a task it had taken: killed, or out of memory.

    Not the records' fault, so exit 1 like every other failure of the environment; what the command was making is not
    published (a build's staged site is removed, the previous one stays)."""


def _lost(process: Any, what: str) -> WorkerLost:
    """The error for a worker process gone while it had work, naming how it ended (its exit status or signal)."""
    process.join(5)  # its pipe closed: it has ended or is ending, so its status is there to be read
    code = process.exitcode
    if code is None:
        how = "it no longer answers"
    elif code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        how = f"it was killed by {name}" + (" (the system sends it when memory runs out; with fewer --jobs fewer processes "
                                            "hold a copy of what they share, so the command needs less)"
                                            if -code == signal.SIGKILL else "")
    else:
        how = f"it exited with status {code}"
    return WorkerLost(f"worker process {process.pid} {what}: {how}")


def ordered_map(function: Callable[[Any, Any], Any], tasks: Iterable[Any], *, jobs: int, context: Any,
                ahead: int | None = None, here: bool | Callable[[Any], bool] = False) -> Iterator[Any]:
    """function(context, task) for each task in `jobs` forked processes, yielded in task order.

    Each worker receives `context` as it was when the workers were forked: it is inherited, never pickled, and lives
    in the worker's own frame, so no module has to hold it. At most `ahead` tasks (default 2 per process) are in
    flight: feeding everything at once lets workers pile finished results up in the parent whenever the parent
    (writing pages, comparing runs) is the slower side. A new task goes to the worker with the fewest in flight.

    With `here`, the calling process is one of the `jobs`: it forks one worker fewer and takes a task itself whenever
    every worker already has two in flight, so N processes do the work instead of N workers and an idle parent (each
    process forked from a large parent holds its own copy of the pages it touches: one process fewer is that much less).
    `here` may instead say which tasks the calling process takes (a predicate): only short ones, when some are long,
    since while it works on a task it feeds no worker, and a worker whose two tasks are done waits for it.
    """
    forks = jobs - 1 if here else jobs
    if forks < 1:
        yield from (_returned(_called(function, context, task)) for task in tasks)
        return
    limit = ahead or 2 * jobs
    forking = multiprocessing.get_context("fork")
    workers: list[tuple[Any, Any]] = []  # (process, the parent's end of its pipe)
    finished = False
    try:
        for _ in range(forks):
            ours, theirs = forking.Pipe()
            # the worker closes its copies of the parent's ends (its own and those of the workers before it), so that
            # only the parent holds them and the worker's end reads as closed once the parent is gone, however it ended
            parents = tuple(conn for _, conn in workers) + (ours,)
            process = forking.Process(target=_serve, args=(function, context, theirs, parents), daemon=True)
            process.start()
            theirs.close()  # the worker holds the only other end, so its end of the pipe closing means it is gone
            workers.append((process, ours))
        in_flight = [0] * forks
        pending: deque[int] = deque()  # task indexes not yet yielded, in order
        done: dict[int, Any] = {}
        for index, task in enumerate(tasks):
            if len(pending) >= limit:
                yield _next_result(pending, done, workers, in_flight)
            if here:  # results already back free their workers: feed those before taking a task here
                _take_ready(done, workers, in_flight, timeout=0)
            chosen = min(range(forks), key=in_flight.__getitem__)
            if here and in_flight[chosen] >= 2 and (here is True or here(task)):
                done[index] = _called(function, context, task)
            else:
                try:
                    workers[chosen][1].send((index, task))
                except OSError:
                    raise _lost(workers[chosen][0], "ended before it took a task") from None
                in_flight[chosen] += 1
            pending.append(index)
        while pending:
            yield _next_result(pending, done, workers, in_flight)
        finished = True
    finally:
        for process, conn in workers:
            if finished:
                conn.send(None)
            else:
                process.terminate()
                # and its pipe closed, so a worker waiting for a task reads its end even when the SIGTERM was lost: one
                # that reaches a process in the first moments after its fork is dropped there, and it would wait for ever
                conn.close()
        for process, conn in workers:
            process.join()
            conn.close()


def _called(function: Callable[[Any, Any], Any], context: Any, task: Any) -> tuple[bool, Any]:
    """(True, function(context, task)), or (False, its error): what a worker hands back, made here."""
    try:
        return True, function(context, task)
    except Exception as error:  # noqa: BLE001 - every error is the consumer's to see, in task order
        return False, error


def _returned(outcome: tuple[bool, Any]) -> Any:
    """The value of an (ok, value) outcome, or its error raised."""
    ok, value = outcome
    if not ok:
        raise value
    return value


@contextmanager
def in_background(function: Callable[[Any, Any], Any], task: Any, *, context: Any) -> Iterator[Callable[[], Any]]:
    """function(context, task) begun at once in one forked process, while the caller goes on with other work; inside the
    block, the call yielded waits for its result (raising its error). The process may fork workers of its own
    (ordered_map); it is ended on leaving the block, also when its result was never asked for."""
    forking = multiprocessing.get_context("fork")
    ours, theirs = forking.Pipe()
    process = forking.Process(target=_serve, args=(function, context, theirs, (ours,)), daemon=False)  # daemons cannot fork
    process.start()
    theirs.close()
    ours.send((0, task))
    outcome: list = []

    def result() -> Any:
        if not outcome:
            try:
                outcome.append(ours.recv()[1:])
            except (EOFError, OSError):
                raise _lost(process, "ended before it returned its result") from None
        ok, value = outcome[0]
        if not ok:
            raise value
        return value

    try:
        yield result
    finally:
        try:
            ours.send(None)  # done, or never asked: either way the process is told to stop
        except OSError:
            pass
        if not outcome:
            process.terminate()
        process.join()
        ours.close()


@contextmanager
def in_a_thread(function: Callable[[], Any]) -> Iterator[None]:
    """function() in a thread while the block runs, for work that waits on the system; leaving the block (also by an
    error) waits for it to end, and its own errors are not raised (the work is a clean-up, such as deleting files)."""
    with ThreadPoolExecutor(1) as pool:
        pool.submit(function)
        yield


def each_in_threads(function: Callable[[Any], Any], items: Iterable[Any], *, jobs: int) -> None:
    """function(item) for every item in `jobs` threads, for work that waits on the system rather than on Python (deleting
    files: the interpreter is released while the kernel unlinks); the first error is raised once every item is done."""
    with ThreadPoolExecutor(max(1, jobs)) as pool:
        for _ in pool.map(function, items):
            pass


def _next_result(pending: deque, done: dict[int, Any], workers: list, in_flight: list[int]) -> Any:
    """The oldest pending task's result; whatever else arrives meanwhile is kept, so no worker waits to hand over."""
    wanted = pending.popleft()
    while wanted not in done:
        _take_ready(done, workers, in_flight)
    return _returned(done.pop(wanted))


def _take_ready(done: dict[int, Any], workers: list, in_flight: list[int], timeout: float | None = None) -> None:
    """Every result a worker has handed back, kept by task index; waits for one at least unless `timeout` says otherwise."""
    conns = {conn: number for number, (_, conn) in enumerate(workers)}
    for conn in wait(list(conns), timeout):
        try:
            index, ok, value = conn.recv()
        except (EOFError, OSError):
            raise _lost(workers[conns[conn]][0], "ended while it had a task") from None
        in_flight[conns[conn]] -= 1
        done[index] = (ok, value)


def _serve(function: Callable[[Any, Any], Any], context: Any, conn, parents: tuple = ()) -> None:
    """A worker's loop: take a task, send back (index, ok, result or error), until told to stop or the parent is gone.

    `parents` are the parent's ends of pipes, inherited by the fork: closed first, so that the parent's end (of this
    worker's pipe) is held by the parent alone, and a parent that ended without a word (killed) reads as the end of the
    pipe instead of leaving the worker waiting for ever, holding its memory and whatever its caller waits on."""
    for end in parents:
        end.close()
    while True:
        try:
            message = conn.recv()
        except (EOFError, OSError):
            return  # the parent is gone
        if message is None:
            return
        index, task = message
        reply = (index, *_called(function, context, task))
        try:
            conn.send(reply)
        except OSError:
            return  # the parent is gone: nobody is left to take the result
        except Exception as error:  # noqa: BLE001 - a result or error that cannot be pickled
            try:
                conn.send((index, False, RuntimeError(f"task {index}: its result could not be sent back: {error!r}")))
            except OSError:
                return
