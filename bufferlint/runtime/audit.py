"""Boundary check: find zero-copy producers that reuse memory without marking their views.

``audit(iterator)`` passes the producer's items through unchanged and, for every tensor/array
it yields *without* a borrow marker, remembers its memory range and a fingerprint of its bytes.
When a later item's memory overlaps an earlier unmarked tensor and that tensor's bytes have
changed, the producer refilled memory it had already handed out: it is a zero-copy producer
that forgot the marker, and every consumer that keeps a yielded tensor (or hands it to a
worker) reads the wrong weights. That is reported as a warning or an ``UnmarkedReuseError``.

To tell reuse from an allocator recycling freed memory, the audit holds a reference to the
tensors it watches (all of them by default; ``window=N`` keeps the last N). It is a test and
canary tool: for an owning producer, a full audit keeps the whole checkpoint alive.
"""

from __future__ import annotations

import bisect
import itertools
import warnings
from collections import deque
from typing import Any, Iterable, Iterator, List, Optional, Tuple

from .errors import UnmarkedReuseError
from .markers import borrow_reason, describe, is_ndarray, is_tensor, memory_extent
from .sanitizer import fingerprint


class UnmarkedReuseWarning(UserWarning):
    """Warning category for ``audit(..., on_reuse="warn")``."""


class Audit:
    """The iterator ``audit()`` returns. ``findings`` lists the messages reported so far."""

    def __init__(self, iterable: Iterable[Any], on_reuse: str = "warn", window: Optional[int] = None) -> None:
        if on_reuse not in ("warn", "raise", "collect"):
            raise ValueError(f"on_reuse must be 'warn', 'raise' or 'collect', got {on_reuse!r}")
        self._source = iter(iterable)
        self.on_reuse = on_reuse
        self.window = window
        self.findings: List[str] = []
        self.yielded = 0
        self._iter = self._run()

    def __iter__(self) -> "Audit":
        return self

    def __next__(self) -> Any:
        return next(self._iter)

    def close(self) -> None:
        self._iter.close()
        close = getattr(self._source, "close", None)
        if close is not None:
            close()

    def _report(self, message: str) -> None:
        self.findings.append(message)
        if self.on_reuse == "raise":
            raise UnmarkedReuseError(message)
        if self.on_reuse == "warn":
            warnings.warn(message, UnmarkedReuseWarning, stacklevel=3)

    def _run(self) -> Iterator[Any]:
        counter = itertools.count()
        watched: dict = {}  # key -> (label, value, (space, start, end), fingerprint)
        index: dict = {}  # space -> sorted [(start, key, end)]
        maxlen: dict = {}
        order: deque = deque()

        def forget(key: int) -> None:
            label, value, (space, start, end), fp = watched.pop(key)
            ranges = index[space]
            i = bisect.bisect_left(ranges, (start, key, end))
            if i < len(ranges) and ranges[i][1] == key:
                del ranges[i]

        for item in self._source:
            self.yielded += 1
            for label, value in _tensors_in(item, self.yielded - 1):
                extent = memory_extent(value)
                if extent is None:
                    continue
                space, start, end = extent
                ranges = index.get(space, [])
                if ranges:
                    lo = bisect.bisect_left(ranges, (start - maxlen[space] + 1,))
                    hi = bisect.bisect_left(ranges, (end,))
                    for _r_start, key, r_end in list(ranges[lo:hi]):
                        if r_end <= start:
                            continue
                        p_label, p_value, _, p_fp = watched[key]
                        if fingerprint(p_value) != p_fp:
                            forget(key)
                            self._report(
                                f"producer reused the memory of {p_label} ({describe(p_value)}) for "
                                f"{label}, and {p_label} carries no borrow marker: it yields zero-copy "
                                f"views of a buffer it refills. Mark them (bufferlint.runtime.mark_borrowed "
                                f"or mark_iter) so guarded loaders consume them before the next item."
                            )
                if borrow_reason(value) is not None:
                    continue  # marked: consumers can see it is borrowed
                key = next(counter)
                watched[key] = (label, value, extent, fingerprint(value))
                bisect.insort(index.setdefault(space, []), (start, key, end))
                maxlen[space] = max(maxlen.get(space, 0), end - start)
                order.append(key)
                if self.window is not None:
                    while len(order) > self.window:
                        old = order.popleft()
                        if old in watched:
                            forget(old)
            yield item


def _tensors_in(item: Any, position: int) -> List[Tuple[str, Any]]:
    if is_tensor(item) or is_ndarray(item):
        return [(f"item #{position}", item)]
    if isinstance(item, tuple):
        name = next((x for x in item if isinstance(x, str)), None)
        label = repr(name) if name is not None else f"item #{position}"
        return [(label, x) for x in item if is_tensor(x) or is_ndarray(x)]
    return []


def audit(iterable: Iterable[Any], on_reuse: str = "warn", window: Optional[int] = None) -> Audit:
    """Wrap a producer of tensors or ``(name, tensor)`` pairs and report (``on_reuse="warn"``,
    ``"raise"`` or ``"collect"``) yielded tensors that are not marked borrowed yet whose memory a
    later yield reuses. See the module docstring for what is held and why."""
    return Audit(iterable, on_reuse=on_reuse, window=window)
