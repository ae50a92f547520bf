"""``sync_on_marker``: make a loader safe without editing what it calls.

While the decorated function runs on thread T, every executor submission made from T with a
borrowed argument gets the policy -- including submissions inside helpers it calls (SGLang's
``maybe_executor_submit``) and on executors it creates. Implemented with the class-level
executor hook in :mod:`bufferlint.runtime.hooks`.
"""

from __future__ import annotations

import functools
import inspect
from typing import Any, Callable, Optional

from .hooks import guard
from .policies import check_policy


def sync_on_marker(func: Optional[Callable] = None, *, policy: str = "sync", sanitize: bool = False) -> Any:
    """Decorator for a loader function or method (also ``staticmethod``/``classmethod`` objects
    and generator functions). Usable bare (``@sync_on_marker``) or with options
    (``@sync_on_marker(policy="copy")``)."""
    check_policy(policy)
    if func is None:
        return lambda f: sync_on_marker(f, policy=policy, sanitize=sanitize)
    if isinstance(func, staticmethod):
        return staticmethod(sync_on_marker(func.__func__, policy=policy, sanitize=sanitize))
    if isinstance(func, classmethod):
        return classmethod(sync_on_marker(func.__func__, policy=policy, sanitize=sanitize))
    if not callable(func):
        raise TypeError(f"sync_on_marker needs a callable, got {type(func).__name__}")
    if inspect.iscoroutinefunction(func) or inspect.isasyncgenfunction(func):
        raise TypeError(
            "sync_on_marker does not support async functions: activation is per thread, and a "
            "coroutine's submissions interleave with others' on the event loop thread"
        )

    if inspect.isgeneratorfunction(func):

        @functools.wraps(func)
        def gen_wrapper(*args: Any, **kwargs: Any) -> Any:
            # Active only while the generator body runs, not while it is suspended.
            with guard(policy, sanitize):
                gen = func(*args, **kwargs)
                try:
                    value = next(gen)
                except StopIteration as stop:
                    return stop.value
            while True:
                try:
                    sent = yield value
                except GeneratorExit:
                    gen.close()
                    raise
                except BaseException as exc:
                    with guard(policy, sanitize):
                        try:
                            value = gen.throw(exc)
                        except StopIteration as stop:
                            return stop.value
                    continue
                with guard(policy, sanitize):
                    try:
                        value = gen.send(sent)
                    except StopIteration as stop:
                        return stop.value

        wrapper = gen_wrapper
    else:

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with guard(policy, sanitize):
                return func(*args, **kwargs)

    return wrapper
