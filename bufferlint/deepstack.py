"""Run a computation with room for the deepest syntax tree CPython compiles.

The engine walks syntax trees recursively where that is the natural shape (expression
evaluation); LibCST does too. With Python's default recursion limit (1000) and the main
thread's stack, valid generated code ends the analysis: a 1000-branch ``if/elif`` chain,
a 500-term sum. What CPython accepts is the contract, so the work runs in a thread with a
large stack and a recursion limit sized from CPython's own compiler limit (measured, see
below), and recursion depth never decides the result for a file CPython can compile.

Measured on CPython 3.11 (``compile()`` in a fresh interpreter, default recursion limit):
the deepest tree that compiles is about 2,990 levels (a ``+`` chain, unary operators,
``if/elif`` branches, attribute/call/subscript chains, conditional expressions all stop at
2,992-2,993; the compiler allows 3x the recursion limit), and nested blocks stop at 100
levels of indentation. CPython 3.12+ uses a fixed C recursion limit of the same order.
The engine spends a few Python frames per tree level, so the limit leaves ~30 frames per
level. A thread stack of 512 MiB held 300,000 nested C-level calls in the same
measurement (``__hash__`` recursion through tuples, ``ast.parse``, ``compile``), well
above that limit, so reaching the limit raises ``RecursionError`` instead of crashing.
The stack is reserved address space; only the pages a deep file touches are used.
"""

from __future__ import annotations

import sys
import threading
from typing import Callable, TypeVar

COMPILED_DEPTH = 3_000  # the deepest syntax tree CPython compiles (measured, see above)
FRAMES_PER_LEVEL = 32
RECURSION_LIMIT = COMPILED_DEPTH * FRAMES_PER_LEVEL
STACK_BYTES = 512 * 1024 * 1024

T = TypeVar("T")

_lock = threading.Lock()
_depth = 0  # deep calls in progress (the recursion limit is per interpreter, not per thread)
_saved_limit = 0
_local = threading.local()


def run_deep(function: Callable[..., T], *args: object) -> T:
    """``function(*args)`` in a thread with a large stack and a high recursion limit; its
    result is returned and its exception re-raised here. Called from such a thread, it runs
    the function directly."""
    if getattr(_local, "deep", False):
        return function(*args)
    outcome: dict[str, object] = {}

    def target() -> None:
        _local.deep = True
        try:
            outcome["value"] = function(*args)
        except BaseException as exc:  # re-raised in the calling thread
            outcome["error"] = exc

    _raise_limit()
    try:
        worker = _start(target)
        if worker is not None:
            worker.join()
    finally:
        _restore_limit()
    if worker is None:  # the platform cannot give a thread that stack: the default limits, here
        return function(*args)
    if "error" in outcome:
        raise outcome["error"]  # type: ignore[misc]
    return outcome["value"]  # type: ignore[return-value]


def _start(target: Callable[[], None]) -> threading.Thread | None:
    with _lock:  # stack_size applies to threads created after it: set it, start, restore
        try:
            previous = threading.stack_size(STACK_BYTES)
        except (ValueError, RuntimeError):
            return None
        try:
            worker = threading.Thread(target=target, name="bufferlint-deep", daemon=True)
            worker.start()
        except RuntimeError:  # no memory for such a stack: the default limits, in the caller
            return None
        finally:
            threading.stack_size(previous)
    return worker


def _raise_limit() -> None:
    global _depth, _saved_limit
    with _lock:
        if _depth == 0:
            _saved_limit = sys.getrecursionlimit()
            sys.setrecursionlimit(max(_saved_limit, RECURSION_LIMIT))
        _depth += 1


def _restore_limit() -> None:
    global _depth
    with _lock:
        _depth -= 1
        if _depth == 0:
            sys.setrecursionlimit(_saved_limit)
