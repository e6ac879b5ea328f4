"""The cycle collector paused while many long-lived objects are made: a collection meanwhile would only rescan them."""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause the cycle collector for the block, and restore it as it was (a caller may have paused it already).

    Loading, unpacking a run, scoring it and reading the results record each build hundreds of thousands of small
    objects without cycles that stay alive until the step ends; reference counting frees them all afterwards.
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
