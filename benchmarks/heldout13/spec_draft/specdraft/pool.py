"""Small executor helpers shared by the draft loaders."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable, Sequence

import torch

log = logging.getLogger(__name__)


def copy_into(param: torch.Tensor, weight: torch.Tensor) -> None:
    param.data.copy_(weight)


def maybe_submit(
    pool: ThreadPoolExecutor,
    futures: list[Future],
    fn: Callable[..., Any],
    args: Sequence[Any],
    *,
    use_async: bool,
) -> None:
    """Run fn on the pool when use_async, else inline."""
    if use_async:
        futures.append(pool.submit(fn, *args))
    else:
        fn(*args)


def chain(fut: Future) -> Future:
    """A future completed with fut's result once fut is done (for callers that only hold the chain)."""
    out: Future = Future()

    def _forward(done: Future) -> None:
        exc = done.exception()
        if exc is not None:
            out.set_exception(exc)
        else:
            out.set_result(done.result())

    fut.add_done_callback(_forward)
    return out


def log_done(fut: Future) -> None:
    log.debug("copy finished: %s", fut)
