"""Sanitizer: fingerprint borrowed arguments at submit, verify them when the task runs.

A race that corrupts 4 of 17,165 tensors does not fail a test: it loads slightly wrong
weights. In sanitizer mode every borrowed argument of an asynchronous submission is
fingerprinted (CRC-32 of its bytes) at ``submit``; the task re-checks the fingerprints when it
starts and again when it returns, and raises :class:`BufferReuseError` naming the argument if
the bytes changed, i.e. the producer refilled the buffer while the task was in flight.

Turned on per executor (``GuardedExecutor(..., sanitize=True)``) or for the whole process
with ``BUFFERLINT_SANITIZE=1`` (read when ``bufferlint.runtime`` is imported; the pytest plugin
imports it) or ``enable_sanitizer`` (the process-wide switch lives with the executor hook,
``hooks.py``, which calls into this module): then every executor submission with borrowed
arguments, from any thread, is checked without changing how it is scheduled.
"""

from __future__ import annotations

import functools
import logging
import os
import threading
import zlib
from typing import Any, Callable, List, Tuple

from .errors import BufferReuseError
from .markers import describe, is_ndarray, is_tensor, _numpy, _torch

logger = logging.getLogger("bufferlint.runtime")

ENV_VAR = "BUFFERLINT_SANITIZE"

#: Every BufferReuseError the sanitizer raised, newest last (bounded), so that a loader that
#: never calls ``future.result()`` still leaves evidence.
violations: List[BufferReuseError] = []
_MAX_VIOLATIONS = 1000
_lock = threading.Lock()


def env_enabled() -> bool:
    return os.environ.get(ENV_VAR, "").strip().lower() not in ("", "0", "false", "no", "off")


def fingerprint(obj: Any) -> Tuple[int, int]:
    """``(nbytes, crc32)`` of the bytes a tensor or ndarray reads (its logical contents)."""
    if is_tensor(obj):
        torch = _torch()
        t = obj.detach()
        if t.device.type != "cpu":
            t = t.cpu()
        t = t.contiguous().reshape(-1)
        try:
            raw = t.view(torch.uint8).numpy()
        except (RuntimeError, TypeError):  # exotic dtypes numpy cannot view
            raw = t.to(torch.float64).numpy()
        return raw.nbytes, zlib.crc32(memoryview(raw).cast("B"))
    if is_ndarray(obj):
        np = _numpy()
        raw = np.ascontiguousarray(obj).reshape(-1).view(np.uint8)
        return raw.nbytes, zlib.crc32(memoryview(raw).cast("B"))
    raise TypeError(f"cannot fingerprint {type(obj).__name__}")


def _record(error: BufferReuseError) -> None:
    with _lock:
        violations.append(error)
        del violations[:-_MAX_VIOLATIONS]
    logger.error("%s", error)


def verifying(fn: Callable, found: List[Tuple[str, Any, str]]) -> Callable:
    """``fn`` wrapped to verify, at start and at return, that the borrowed values in ``found``
    (``(path, value, reason)`` triples from ``iter_borrowed``) still hold the bytes they held now."""
    fn_name = getattr(fn, "__qualname__", None) or repr(fn)
    checks = []
    for path, value, reason in found:
        try:
            checks.append((path, value, reason, fingerprint(value)))
        except Exception as exc:  # e.g. a marked sparse tensor: no strided bytes to compare
            logger.warning("sanitizer: cannot fingerprint %s of %s (%s): not checked (%s)",
                           path, fn_name, describe(value), exc)

    def verify(when: str) -> None:
        for path, value, reason, expected in checks:
            if fingerprint(value) != expected:
                error = BufferReuseError(
                    f"{path} of {fn_name} ({describe(value)}, {reason}) changed {when}: its producer "
                    f"reused the buffer while the task was in flight, so the task read (or could "
                    f"have read) another tensor's bytes. Consume borrowed views before advancing "
                    f"the producer (bufferlint.runtime.GuardedExecutor policy 'sync' or 'copy')."
                )
                _record(error)
                raise error

    @functools.wraps(fn)
    def task(*args: Any, **kwargs: Any) -> Any:
        verify("between submit and task start")
        result = fn(*args, **kwargs)
        verify("while the task ran")
        return result

    return task

