"""Submit-or-run helper shared by the models."""
from __future__ import annotations

from concurrent.futures import Executor, Future
from typing import Any, Callable, List


def maybe_submit(executor: Executor, futures: List[Future], use_async: bool, fn: Callable[..., Any], *args: Any) -> None:
    if use_async:
        futures.append(executor.submit(fn, *args))
    else:
        fn(*args)
