"""Policies for executor submissions that carry borrowed views, and the executor that applies them.

``sync``  -- run the task inline and hand back a completed Future (the upstream SGLang fix:
             the view is consumed before the producer can advance);
``copy``  -- clone the borrowed tensors into owned memory, then submit asynchronously (keeps
             the copy/compute overlap that ``sync`` gives up);
``raise`` -- raise :class:`BorrowedBufferError` naming the argument (for CI);
``off``   -- submit unchanged (only useful together with the sanitizer).
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Executor, Future
from typing import Any, Callable, List, Optional, Tuple

from . import sanitizer
from .errors import BorrowedBufferError
from .markers import borrow_reason, borrowed_in_call, describe, is_ndarray, is_tensor

POLICIES = ("sync", "copy", "raise", "off")

# Per-thread depth of "inside a bufferlint dispatch": nested submits (an executor whose submit
# calls another executor's submit) pass through instead of applying a policy twice.
_bypass = threading.local()


def check_policy(policy: str) -> str:
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: expected one of {', '.join(POLICIES)}")
    return policy


def in_dispatch() -> bool:
    return getattr(_bypass, "depth", 0) > 0


def _call_through(submit: Callable[..., Future], fn: Callable, args: tuple, kwargs: dict) -> Future:
    _bypass.depth = getattr(_bypass, "depth", 0) + 1
    try:
        return submit(fn, *args, **kwargs)
    finally:
        _bypass.depth -= 1


def run_inline(fn: Callable, args: tuple, kwargs: dict) -> Future:
    """Run ``fn(*args, **kwargs)`` now, on this thread; return a completed Future with its
    result or exception (as an executor would). KeyboardInterrupt/SystemExit propagate."""
    future: Future = Future()
    future.set_running_or_notify_cancel()
    try:
        result = fn(*args, **kwargs)
    except BaseException as exc:  # noqa: BLE001 - mirror ThreadPoolExecutor's worker
        future.set_exception(exc)
        if isinstance(exc, (KeyboardInterrupt, SystemExit)):
            raise
    else:
        future.set_result(result)
    return future


def own_copy(value: Any) -> Any:
    """An owned copy of a tensor/array (clone into fresh memory, without the borrow marker)."""
    if is_tensor(value):
        return value.clone()
    if is_ndarray(value):
        return value.copy()
    return value


def _replace(obj: Any, ids: set, depth: int = 0) -> Any:
    """``obj`` with every tensor/array whose id is in ``ids`` replaced by an owned copy,
    rebuilding the tuples, lists, dicts and partials on the way (mirrors ``iter_borrowed``)."""
    if id(obj) in ids:
        return own_copy(obj)
    if depth >= 6:
        return obj
    if isinstance(obj, tuple):
        new = tuple(_replace(v, ids, depth + 1) for v in obj)
        if any(a is not b for a, b in zip(new, obj)):
            return type(obj)(*new) if hasattr(obj, "_fields") else new
        return obj
    if isinstance(obj, list):
        new_list = [_replace(v, ids, depth + 1) for v in obj]
        return new_list if any(a is not b for a, b in zip(new_list, obj)) else obj
    if isinstance(obj, dict):
        new_dict = {k: _replace(v, ids, depth + 1) for k, v in obj.items()}
        if any(new_dict[k] is not obj[k] for k in obj):
            try:
                copy = type(obj)()
                copy.update(new_dict)
                return copy
            except Exception:
                return new_dict
        return obj
    if isinstance(obj, functools.partial):
        args = _replace(obj.args, ids, depth + 1)
        keywords = _replace(obj.keywords, ids, depth + 1)
        if args is obj.args and keywords is obj.keywords:
            return obj
        return functools.partial(obj.func, *args, **keywords)
    return obj


def copy_call(fn: Callable, args: tuple, kwargs: dict, found: List[Tuple[str, Any, str]]) -> Tuple[Callable, tuple, dict]:
    ids = {id(value) for _, value, _ in found}
    return _replace(fn, ids), _replace(args, ids), _replace(kwargs, ids)


def dispatch(
    submit: Callable[..., Future],
    fn: Callable,
    args: tuple,
    kwargs: dict,
    policy: str,
    sanitize: bool = False,
) -> Future:
    """Submit ``fn(*args, **kwargs)`` through ``submit`` applying ``policy`` if any argument is
    borrowed. The single place where the rule is applied (GuardedExecutor, guarded_submit and
    the ``sync_on_marker`` hook all come here)."""
    found = borrowed_in_call(fn, args, kwargs)
    if not found:
        return _call_through(submit, fn, args, kwargs)
    if policy == "sync":
        return run_inline(fn, args, kwargs)
    if policy == "raise":
        path, value, reason = found[0]
        name = getattr(fn, "__qualname__", None) or repr(fn)
        raise BorrowedBufferError(
            f"{path} of {name} is a borrowed view ({describe(value)}, {reason}) submitted to an "
            f"executor: its producer may refill the buffer before the task reads it. Consume it "
            f"synchronously or copy it first (policy 'sync' or 'copy')."
            + (f" ({len(found) - 1} more borrowed argument(s))" if len(found) > 1 else "")
        )
    if policy == "copy":
        # The copies are owned memory: nothing left for the sanitizer to check.
        fn, args, kwargs = copy_call(fn, args, kwargs, found)
        return _call_through(submit, fn, args, kwargs)
    # "off": unchanged, only checked
    if sanitize:
        fn = sanitizer.verifying(fn, found)
    return _call_through(submit, fn, args, kwargs)


# ---------------------------------------------------------------------------
# Drop-in guards


def should_async_load(weight: Any) -> bool:
    """Drop-in replacement for SGLang's ``should_async_load`` with the fixed semantics: False for
    borrowed tensors (marked, or views of a marked buffer -- which SGLang's attribute check misses),
    True for other CPU tensors, False for device tensors and for anything that is not a tensor."""
    if not is_tensor(weight):
        return False
    if borrow_reason(weight) is not None:
        return False
    return weight.device.type == "cpu"


def guarded_submit(executor: Executor, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
    """``executor.submit(fn, *args, **kwargs)``, except that when any argument is borrowed the
    task runs inline and a completed Future (with its result or exception) is returned."""
    return dispatch(executor.submit, fn, args, kwargs, "sync")


class GuardedExecutor(Executor):
    """An Executor that applies a borrow policy to every ``submit`` (and so ``map``) of the
    executor it wraps. ``policy`` is ``"sync"`` (default), ``"copy"``, ``"raise"`` or ``"off"``;
    ``sanitize=True`` (default: the ``BUFFERLINT_SANITIZE`` environment variable) fingerprints the
    borrowed arguments that still go asynchronous and raises BufferReuseError if they change. With
    ``sanitize=True`` and no explicit policy the executor only checks (policy ``"off"``).
    Shutting it down shuts down the wrapped executor."""

    _bufferlint_guarded = True

    def __init__(self, executor: Executor, policy: Optional[str] = None, sanitize: Optional[bool] = None) -> None:
        if sanitize is None:
            sanitize = sanitizer.env_enabled()
        if policy is None:
            policy = "off" if sanitize else "sync"
        self.executor = executor
        self.policy = check_policy(policy)
        self.sanitize = bool(sanitize)

    def submit(self, fn: Callable, /, *args: Any, **kwargs: Any) -> Future:
        return dispatch(self.executor.submit, fn, args, kwargs, self.policy, self.sanitize)

    def shutdown(self, wait: bool = True, *, cancel_futures: bool = False) -> None:
        self.executor.shutdown(wait=wait, cancel_futures=cancel_futures)

    def __getattr__(self, name: str) -> Any:
        if name == "executor":  # not yet set (during unpickling / a failed __init__)
            raise AttributeError(name)
        return getattr(self.executor, name)

    def __repr__(self) -> str:
        return f"GuardedExecutor({self.executor!r}, policy={self.policy!r}, sanitize={self.sanitize})"
