"""A thin layer over the executor: run now, or later on the pool."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable


def run_or_defer(pool: ThreadPoolExecutor, pending: list[Future], later: bool, fn: Callable[..., Any], *args: Any) -> None:
    if later:
        pending.append(pool.submit(fn, *args))
    else:
        fn(*args)


def run_now(pool: ThreadPoolExecutor, fn: Callable[..., Any], *args: Any) -> Any:
    return pool.submit(fn, *args).result()
