"""Policies for executor submissions that carry borrowed views, and the executor that applies them.

``sync``  -- run the task inline and hand back a completed Future (the upstream SGLang fix:
             the view is consumed before the producer can advance);
``copy``  -- clone the borrowed tensors into owned memory, then submit asynchronously (keeps
             the copy/compute overlap that ``sync`` gives up);
``raise`` -- raise :class:`BorrowedBufferError` naming the argument (for CI);
``off``   -- submit unchanged (only useful together with the sanitizer).

A submission too big to inspect whole (more than ``markers.INSPECTION_LIMIT`` values) may hold
a borrowed view where nobody looked, so it gets the safe side of its policy: ``sync`` and
``copy`` run it inline, ``raise`` raises; an :class:`InspectionLimitWarning` says which. ``off``
submits it unchanged, as it submits everything (the sanitizer checks what was found).
"""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Executor, Future
from typing import Any, Callable, List, Optional, Tuple

from . import markers, sanitizer
from .errors import BorrowedBufferError
from .markers import (Inspection, borrow_reason, borrowed_in_call, borrowed_values, describe, is_ndarray, is_tensor,
                      warn_limit)

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


def _owned(obj: Any) -> Any:
    """``obj`` with every borrowed tensor/array inside it (as ``iter_borrowed`` finds them, at
    any depth) replaced by an owned copy, rebuilding the containers that hold them."""
    finished: List[Any] = []
    new = {}
    for value in borrowed_values(obj, finished):
        if id(value) not in new:
            new[id(value)] = own_copy(value)
    for container in finished:  # inner containers come first
        rebuilt = _rebuilt(container, new)
        if rebuilt is not container:
            new[id(container)] = rebuilt
    return new.get(id(obj), obj)


def _rebuilt(container: Any, new: dict) -> Any:
    """``container`` with the children whose id is in ``new`` replaced (a copy; itself when none is)."""
    if isinstance(container, functools.partial):
        args, keywords = new.get(id(container.args)), new.get(id(container.keywords))
        if args is None and keywords is None:
            return container
        return functools.partial(container.func, *(args or container.args), **(keywords or container.keywords))
    if isinstance(container, memoryview):
        if id(container.obj) not in new:
            return container
        owned = memoryview(container.tobytes())
        try:
            return owned.cast(container.format, container.shape)
        except (TypeError, ValueError):
            return owned
    if isinstance(container, dict):
        values = {k: new.get(id(v), v) for k, v in dict.items(container)}
        if all(values[k] is v for k, v in dict.items(container)):
            return container
        try:
            copy = type(container)()
            copy.update(values)
            return copy
        except Exception:
            return values
    items = list(tuple.__iter__(container) if isinstance(container, tuple) else container)
    replaced = [new.get(id(v), v) for v in items]
    if all(a is b for a, b in zip(replaced, items)):
        return container
    if isinstance(container, tuple):
        if hasattr(container, "_fields"):  # a namedtuple
            return type(container)(*replaced)
        return tuple(replaced)
    if isinstance(container, (set, frozenset)):
        return type(container)(replaced) if type(container) in (set, frozenset) else set(replaced)
    return replaced


def copy_call(fn: Callable, args: tuple, kwargs: dict) -> Tuple[Callable, tuple, dict]:
    """The call with every borrowed value it would receive replaced by an owned copy."""
    return (_owned(fn) if isinstance(fn, functools.partial) else fn), _owned(args), _owned(kwargs)


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
    inspection = Inspection()
    found = borrowed_in_call(fn, args, kwargs, inspection)
    if not inspection.complete and policy != "off":
        return _past_the_limit(fn, args, kwargs, policy, found)
    if not found:
        return _call_through(submit, fn, args, kwargs)
    if policy == "sync":
        return run_inline(fn, args, kwargs)
    if policy == "raise":
        path, value, reason = found[0]
        raise BorrowedBufferError(
            f"{path} of {_name(fn)} is a borrowed view ({describe(value)}, {reason}) submitted to an "
            f"executor: its producer may refill the buffer before the task reads it. Consume it "
            f"synchronously or copy it first (policy 'sync' or 'copy')."
            + (f" ({len(found) - 1} more borrowed argument(s))" if len(found) > 1 else "")
        )
    if policy == "copy":
        # The copies are owned memory: nothing left for the sanitizer to check.
        fn, args, kwargs = copy_call(fn, args, kwargs)
        return _call_through(submit, fn, args, kwargs)
    # "off": unchanged, only checked
    if not inspection.complete:
        warn_limit(f"{_name(fn)} was submitted unchanged (policy 'off'); "
                               f"{len(found)} borrowed view(s) found before it", stacklevel=4)
    if sanitize:
        fn = sanitizer.verifying(fn, found)
    return _call_through(submit, fn, args, kwargs)


def _name(fn: Callable) -> str:
    return getattr(fn, "__qualname__", None) or repr(fn)


def _past_the_limit(fn: Callable, args: tuple, kwargs: dict, policy: str, found: list) -> Future:
    """A submission not inspected whole: whatever was not looked at may be a borrowed view, so
    the task runs inline (``sync``, ``copy``: copying only what was found would pass the rest
    through) or the submission raises (``raise``)."""
    seen = f"{len(found)} borrowed view(s) found before it" if found else "no borrowed view found before it"
    if policy == "raise":
        raise BorrowedBufferError(
            f"a submission of {_name(fn)} holds more than {markers.INSPECTION_LIMIT} values ({seen}); the "
            f"rest was not inspected, so it may hand a borrowed view to an executor. Consume it "
            f"synchronously, or submit fewer values per task (bufferlint.runtime.markers.INSPECTION_LIMIT)."
        )
    warn_limit(f"{_name(fn)} ran synchronously (policy {policy!r}; {seen})", stacklevel=4)
    return run_inline(fn, args, kwargs)


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
    try:
        return weight.device.type == "cpu"
    except Exception:  # a tensor subclass without a device: loading it inline is always safe
        return False


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
