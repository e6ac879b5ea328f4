"""Forked worker processes that hand results back in order and never run far ahead of whoever consumes them."""

from __future__ import annotations

from collections import deque
from typing import Any, Callable, Iterable, Iterator


def ordered_map(function: Callable[[Any], Any], tasks: Iterable[Any], *, jobs: int, initializer: Callable[..., None],
                initargs: tuple = (), ahead: int | None = None) -> Iterator[Any]:
    """function(task) for each task in `jobs` forked processes, yielded in task order.

    At most `ahead` tasks (default 2 per process) are in flight: a pool fed everything at once lets its workers
    pile finished results up in the parent whenever the parent (writing pages, comparing runs) is the slower side.
    Forked, so workers inherit the loaded records instead of unpickling them.
    """
    import multiprocessing

    context = multiprocessing.get_context("fork")
    limit = ahead or 2 * jobs
    with context.Pool(processes=jobs, initializer=initializer, initargs=initargs) as pool:
        pending: deque = deque()
        for task in tasks:
            if len(pending) >= limit:
                yield pending.popleft().get()
            pending.append(pool.apply_async(function, (task,)))
        while pending:
            yield pending.popleft().get()
