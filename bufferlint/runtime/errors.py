"""Exceptions raised by the runtime shim."""

from __future__ import annotations


class BorrowedBufferError(RuntimeError):
    """A borrowed view (a zero-copy view of a buffer its producer reuses) reached an executor
    under ``policy="raise"``. The message names the argument and the tensor."""


class BufferReuseError(RuntimeError):
    """The sanitizer saw a borrowed argument change between submit and the task using it:
    the producer refilled the buffer before the worker read it."""


class UnmarkedReuseError(BufferReuseError):
    """``audit()`` saw a producer reuse the memory of a tensor it had yielded without a
    borrow marker (a zero-copy producer that forgot to mark its views)."""


class PatchError(LookupError):
    """``patch()``/``unpatch()`` could not resolve or wrap a ``package.module:Qualified.name`` target."""


class PatchWarning(UserWarning):
    """A ``patch()`` target could not be installed when its module was imported; the other
    targets are unaffected. ``bufferlint.runtime.status()`` lists it as failed with the reason."""
