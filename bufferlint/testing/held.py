"""HeldExecutor: tasks start only after the caller releases them."""

from __future__ import annotations

import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from typing import Any, Callable


class HoldTimeout(AssertionError):
    """A HeldExecutor was never released within ``hold_timeout`` seconds (it then released
    itself so the test could not hang): usually the code under test waited on one of its
    futures before the point where the test meant to release it."""


class HeldExecutor(Executor):
    """A thread pool whose workers are all parked on an Event until :meth:`release`.

    The seed regression test's technique as a tool: submit tasks that read a view, overwrite the
    buffer (as the producer would when advanced), then release; a task that did not consume its
    view at submit time observes the overwrite deterministically. Tasks run in submission order
    once released (with ``max_workers=1``, strictly one after another).

    ``hold_timeout`` bounds the hold so a test whose code waits on a held future fails instead of
    hanging: after it the executor releases itself and :attr:`timed_out` is set (the
    ``bufferlint_race`` fixture turns that into a HoldTimeout failure).
    """

    def __init__(self, max_workers: int = 1, hold_timeout: float = 30.0) -> None:
        self.hold_timeout = hold_timeout
        self.timed_out = False
        self._release = threading.Event()
        self._pool = ThreadPoolExecutor(max_workers=max_workers, thread_name_prefix="bufferlint-held")
        # One blocker per worker: ThreadPoolExecutor starts a thread per submit up to max_workers,
        # so every worker is parked before the first real task is queued.
        self._blockers = [self._pool.submit(self._hold) for _ in range(max_workers)]

    def _hold(self) -> None:
        if not self._release.wait(self.hold_timeout):
            self.timed_out = True
            self._release.set()

    @property
    def held(self) -> bool:
        """True until released."""
        return not self._release.is_set()

    def release(self) -> None:
        """Let the queued (and future) tasks run."""
        self._release.set()

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        return self._pool.submit(fn, *args, **kwargs)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        """Releases the held workers, then shuts the pool down."""
        self.release()
        self._pool.shutdown(wait=wait, cancel_futures=cancel_futures)
