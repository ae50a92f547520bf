"""Executors used by the swapper: a synchronous one for tests and small adapters, a batching one."""

from __future__ import annotations

import logging
from concurrent.futures import Executor, Future
from typing import Any, Callable

log = logging.getLogger(__name__)


class InlineExecutor(Executor):
    """Runs each task in submit() itself and returns a finished future."""

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        fut: Future = Future()
        try:
            fut.set_result(fn(*args, **kwargs))
        except BaseException as exc:  # noqa: BLE001
            fut.set_exception(exc)
        return fut


class DeferredExecutor(Executor):
    """Queues tasks and runs them all in flush(): batches small adapter copies."""

    def __init__(self) -> None:
        self._queued: list[tuple[Future, Callable[..., Any], tuple, dict]] = []

    def submit(self, fn: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Future:
        fut: Future = Future()
        self._queued.append((fut, fn, args, kwargs))
        return fut

    def flush(self) -> None:
        queued, self._queued = self._queued, []
        for fut, fn, args, kwargs in queued:
            fut.set_result(fn(*args, **kwargs))
        log.debug("flushed %d deferred copies", len(queued))


class Dispatcher:
    """Runs a copy on the pool when `defer` is true, inline otherwise."""

    def __init__(self, pool: Executor) -> None:
        self.pool = pool
        self.futures: list[Future] = []

    def dispatch(self, fn: Callable[..., Any], *args: Any, defer: bool) -> None:
        if defer:
            self.futures.append(self.pool.submit(fn, *args))
        else:
            fn(*args)

    def drain(self) -> None:
        for fut in self.futures:
            fut.result()
        self.futures.clear()
