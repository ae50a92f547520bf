"""One process-wide copy pool, and the submit-or-run helper every loader uses."""
from __future__ import annotations

import threading
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

_POOL: ThreadPoolExecutor | None = None
_LOCK = threading.Lock()


def shared_pool() -> ThreadPoolExecutor:
    global _POOL
    with _LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(max_workers=8, thread_name_prefix="hload")
        return _POOL


def run_maybe_async(fn: Callable[..., Any], *args: Any, use_async: bool = True) -> Future | None:
    """Run ``fn(*args)`` on the pool when ``use_async``, else inline (returns None)."""
    if use_async:
        return shared_pool().submit(fn, *args)
    fn(*args)
    return None
