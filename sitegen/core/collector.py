"""The one cycle-collector policy, chosen by the callers (build, check, the command line), never by a library function."""

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


@contextmanager
def frozen_when_made() -> Iterator[None]:
    """Pause the collector while long-lived objects are made, then freeze them out of its sight.

    Made for what stays alive for a whole phase (the loaded records, an unpacked run read by many pages): every full
    collection afterwards would otherwise rescan them (at 10,000 case versions a third of the rendering time). Frozen
    objects are still freed by reference counting when they are let go. A library function that makes such objects
    takes this as its `unpacking` argument from its caller and defaults to doing nothing.

    Garbage in reference cycles is collected first: frozen, it would never be (at 10,000 case versions each run's page
    data left this way took about 8 MiB in every rendering process). Frozen objects are not scanned, so this collection
    looks only at what was made since the last freeze.
    """
    gc.collect()
    with collector_paused():
        yield
        gc.freeze()

