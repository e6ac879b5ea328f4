"""SIGTERM turned into an exception for the span of a command, so a build asked to stop cleans up as on Ctrl-C."""

from __future__ import annotations

import os
import signal
import threading
from contextlib import contextmanager
from typing import Iterator


class Terminated(BaseException):
    """The process was asked to end (SIGTERM: a job's time limit, a service stopping, `kill`).

    Like KeyboardInterrupt it is not an Exception: no handler of the work's own errors may take it for one and go on.
    """


@contextmanager
def terminated_raises() -> Iterator[None]:
    """Within the block, SIGTERM raises Terminated in this process, so its clean-up runs: workers are stopped, a staged
    site is removed, and the previous one stays. The handler as it was is restored on leaving; the caller chooses this
    policy (the command line), never a library function. Outside the main thread, where no handler can be set, nothing
    changes. A process forked meanwhile (a worker) that gets SIGTERM ends as it would have without the handler; a second
    SIGTERM while the first one's clean-up runs is ignored (SIGKILL still ends the process at once)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    owner = os.getpid()

    def handler(signum: int, frame: object) -> None:
        if os.getpid() != owner:  # a forked worker, told to stop by the process that forked it
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        signal.signal(signal.SIGTERM, signal.SIG_IGN)  # told once: the clean-up it starts is not cut short by another
        raise Terminated()

    previous = signal.signal(signal.SIGTERM, handler)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
