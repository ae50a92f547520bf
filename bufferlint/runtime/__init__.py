"""bufferlint.runtime: make loaders that hand borrowed views to worker threads safe at run time.

A *borrowed view* is a zero-copy tensor over a buffer its producer reuses (the RunAI Model
Streamer's CPU ring under ``owned=False``, SGLang's ``runai_safetensors_weights_iterator``).
Handing one to an executor and advancing the producer lets the producer overwrite the bytes
before the worker reads them. This package is the sync-on-marker fix as a library:

* borrow tracking -- :func:`mark_borrowed`, :func:`is_borrowed` (views of a marked buffer too);
* guards -- :func:`should_async_load`, :func:`guarded_submit`, :class:`GuardedExecutor`
  (policies ``sync``, ``copy``, ``raise``);
* no source change -- :func:`sync_on_marker` and :func:`patch` / :func:`unpatch` / :func:`status`
  (lazy: each target is installed when its module is imported);
* detection -- the sanitizer (``BUFFERLINT_SANITIZE=1``) and :func:`audit`.

Importing it does not import torch (tensors are recognised once the caller has imported torch).
"""

from .audit import Audit, UnmarkedReuseWarning, audit
from .errors import BorrowedBufferError, BufferReuseError, PatchError, PatchWarning, UnmarkedReuseError
from .hooks import disable_sanitizer, enable_sanitizer, guard, sanitizer_enabled
from .markers import (
    DEFAULT_MARKER,
    KNOWN_MARKERS,
    borrow_reason,
    is_borrowed,
    iter_borrowed,
    mark_borrowed,
    mark_iter,
    memory_extent,
    register_marker,
)
from .patch import TargetStatus, patch, patched, status, unpatch
from .policies import POLICIES, GuardedExecutor, guarded_submit, should_async_load
from .sanitizer import fingerprint
from .sync import sync_on_marker

__all__ = [
    "Audit",
    "BorrowedBufferError",
    "BufferReuseError",
    "DEFAULT_MARKER",
    "GuardedExecutor",
    "KNOWN_MARKERS",
    "POLICIES",
    "PatchError",
    "PatchWarning",
    "TargetStatus",
    "UnmarkedReuseError",
    "UnmarkedReuseWarning",
    "audit",
    "borrow_reason",
    "disable_sanitizer",
    "enable_sanitizer",
    "fingerprint",
    "guard",
    "guarded_submit",
    "is_borrowed",
    "iter_borrowed",
    "mark_borrowed",
    "mark_iter",
    "memory_extent",
    "patch",
    "patched",
    "register_marker",
    "sanitizer_enabled",
    "should_async_load",
    "status",
    "sync_on_marker",
    "unpatch",
]

from . import sanitizer as _sanitizer

if _sanitizer.env_enabled():
    enable_sanitizer()
