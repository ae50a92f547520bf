"""Pause Python's cyclic garbage collector around work that builds a large acyclic heap.

Syntax trees, summaries and findings are acyclic and live until the end of a run, so
reference counting frees them. The cyclic collector, meanwhile, would scan the whole growing
heap again and again to free nothing: half the run time on a large tree. Everything built
while it is paused must be released before it resumes (return from the work, drop the
references), or its first collection walks all of it at once (1.8 s after a 0.5.23 analysis
whose state was still held while the cache record was written).
"""

from __future__ import annotations

import gc
from contextlib import contextmanager
from typing import Iterator


@contextmanager
def paused_gc() -> Iterator[None]:
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()
