"""The process-wide executor hook behind ``sync_on_marker``, ``patch`` and the global sanitizer.

While at least one user needs it, ``submit`` is wrapped at class level on
``concurrent.futures.Executor`` and on every subclass that defines its own ``submit``
(``ThreadPoolExecutor``, ``ProcessPoolExecutor``, third-party executors, and subclasses defined
while the hook is installed). The wrapper costs one thread-local lookup when inactive. It is
*activated per thread*: a submission is guarded only when the submitting thread is inside an
active region (``activate``), or when the global sanitizer is on. Executors created inside the
region are covered because the hook is on the class, not on an instance.

Installation is reference counted: the last ``release`` restores the original methods.
"""

from __future__ import annotations

import concurrent.futures
import functools
import sys
import threading
from contextlib import contextmanager
from typing import Any, Callable, Dict, Iterator, List, Optional, Tuple

from .markers import note_attribute_set
from .policies import check_policy, dispatch, in_dispatch

_lock = threading.RLock()
_users = 0
_originals: Dict[type, Callable] = {}  # class -> its own original submit
_had_init_subclass = False
_global_sanitize = False
_state = threading.local()  # .stack: list of (policy, sanitize)


def _make_wrapper(orig: Callable) -> Callable:
    @functools.wraps(orig)
    def submit(self: Any, fn: Callable, /, *args: Any, **kwargs: Any) -> Any:
        stack = getattr(_state, "stack", None)
        if stack:
            policy, sanitize = stack[-1]
        elif _global_sanitize:
            policy, sanitize = "off", True
        else:
            return orig(self, fn, *args, **kwargs)
        if in_dispatch():  # a nested submit inside our own dispatch (e.g. HeldExecutor -> pool)
            return orig(self, fn, *args, **kwargs)
        return dispatch(functools.partial(orig, self), fn, args, kwargs, policy, sanitize)

    submit.__bufferlint_original__ = orig  # type: ignore[attr-defined]
    return submit


def _wrap_class(cls: type) -> None:
    if cls in _originals or getattr(cls, "_bufferlint_guarded", False):
        return
    orig = cls.__dict__.get("submit")
    if orig is None or getattr(orig, "__bufferlint_original__", None) is not None:
        return
    _originals[cls] = orig
    setattr(cls, "submit", _make_wrapper(orig))


def _all_subclasses(cls: type) -> List[type]:
    out, todo = [], [cls]
    while todo:
        c = todo.pop()
        out.append(c)
        todo.extend(c.__subclasses__())
    return out


def _on_subclass(cls: type, **kwargs: Any) -> None:
    # Executor.__init_subclass__ while installed: wrap executors defined from now on.
    with _lock:
        if _users:
            _wrap_class(cls)


_tensor_setattr: Optional[Tuple[type, Any]] = None  # (torch.Tensor, its own __setattr__ or None)


def _install_tensor_setattr() -> None:
    """While installed, ``setattr(tensor, <known marker>, True)`` also registers the tensor's
    buffer, so views made from a tensor SGLang-style-marked inside a guarded loader are borrowed."""
    global _tensor_setattr
    torch = sys.modules.get("torch")
    if torch is None or _tensor_setattr is not None:
        return
    cls = torch.Tensor
    own = cls.__dict__.get("__setattr__")
    inherited = cls.__setattr__

    def __setattr__(self: Any, name: str, value: Any) -> None:
        inherited(self, name, value)
        if name[:1] == "_" and value is True:
            note_attribute_set(self, name, value)

    cls.__setattr__ = __setattr__
    _tensor_setattr = (cls, own)


def _uninstall_tensor_setattr() -> None:
    global _tensor_setattr
    if _tensor_setattr is None:
        return
    cls, own = _tensor_setattr
    if own is None:
        del cls.__setattr__
    else:
        setattr(cls, "__setattr__", own)
    _tensor_setattr = None


def _install() -> None:
    global _had_init_subclass
    _install_tensor_setattr()
    for cls in _all_subclasses(concurrent.futures.Executor):
        _wrap_class(cls)
    _had_init_subclass = "__init_subclass__" in concurrent.futures.Executor.__dict__
    if not _had_init_subclass:
        concurrent.futures.Executor.__init_subclass__ = classmethod(_on_subclass)  # type: ignore[assignment]


def _uninstall() -> None:
    _uninstall_tensor_setattr()
    for cls, orig in list(_originals.items()):
        if getattr(cls.__dict__.get("submit"), "__bufferlint_original__", None) is orig:
            setattr(cls, "submit", orig)
    _originals.clear()
    if not _had_init_subclass and "__init_subclass__" in concurrent.futures.Executor.__dict__:
        del concurrent.futures.Executor.__init_subclass__


def acquire() -> None:
    """Take a reference on the hook (installing it on the first)."""
    global _users
    with _lock:
        _users += 1
        if _users == 1:
            _install()


def release() -> None:
    """Drop a reference (restoring the original ``submit`` methods on the last)."""
    global _users
    with _lock:
        if _users <= 0:
            raise RuntimeError("bufferlint executor hook released more often than acquired")
        _users -= 1
        if _users == 0:
            _uninstall()


def installed() -> bool:
    with _lock:
        return _users > 0


def enable_sanitizer() -> None:
    """Check every borrowed executor submission in this process (any thread, any executor)."""
    _set_global_sanitize(True)


def disable_sanitizer() -> None:
    _set_global_sanitize(False)


def sanitizer_enabled() -> bool:
    return _global_sanitize


def _set_global_sanitize(on: bool) -> None:
    global _global_sanitize
    with _lock:
        if on == _global_sanitize:
            return
        _global_sanitize = on
        (acquire if on else release)()


def active_policy() -> Optional[Tuple[str, bool]]:
    """``(policy, sanitize)`` active on this thread, or None."""
    stack = getattr(_state, "stack", None)
    return stack[-1] if stack else None


@contextmanager
def guard(policy: str = "sync", sanitize: bool = False) -> Iterator[None]:
    """Within this block, executor submissions made *from this thread* with borrowed arguments
    get ``policy`` (on any executor, including ones created inside the block)."""
    check_policy(policy)
    acquire()
    stack = getattr(_state, "stack", None)
    if stack is None:
        stack = _state.stack = []
    stack.append((policy, bool(sanitize)))
    try:
        yield
    finally:
        stack.pop()
        release()
