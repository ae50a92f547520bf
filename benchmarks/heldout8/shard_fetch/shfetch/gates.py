"""Which streamed tensors may be copied on the pool, overlapping the stream, and which inline.

SGLang marks each tensor its RunAI iterator yields with `_sglang_runai_streamer_tensor`: a
view of the streamer's buffer, refilled as soon as the iterator moves on.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import ClassVar

import torch

RUNAI_MARKER = "_sglang_runai_streamer_tensor"
# The attribute's name in our fork before we rebased on upstream SGLang; nothing sets it now.
FORK_MARKER = "_sglang_runai_stream_tensor"

Gate = Callable[[torch.Tensor], bool]


def traced(fn: Gate) -> Gate:
    """Count gate decisions for the load report."""

    @functools.wraps(fn)
    def wrapper(w: torch.Tensor) -> bool:
        verdict = fn(w)
        wrapper.calls += 1  # type: ignore[attr-defined]
        return verdict

    wrapper.calls = 0  # type: ignore[attr-defined]
    return wrapper


class HostOverlapMixin:
    """Overlap large host tensors; anything the streamer lends is copied inline."""

    min_overlap_numel: int = 1 << 14

    def can_overlap(self, w: torch.Tensor) -> bool:
        if not hasattr(w, RUNAI_MARKER):
            return w.device.type == "cpu" and w.numel() >= self.min_overlap_numel
        return False


class SizeOverlapMixin:
    """Overlap every large host tensor (used by the quick-start loader)."""

    min_overlap_numel: int = 1 << 14

    def can_overlap(self, w: torch.Tensor) -> bool:
        if w.numel() < self.min_overlap_numel:
            return False
        return w.device.type == "cpu"


@traced
def overlap_ok(w: torch.Tensor) -> bool:
    if getattr(w, RUNAI_MARKER, False):
        return False
    return w.is_cpu


@traced
def overlap_ok_fork(w: torch.Tensor) -> bool:
    if getattr(w, FORK_MARKER, False):
        return False
    return w.is_cpu


def overlap_ok_storage(w: torch.Tensor) -> bool:
    """Decide on the underlying storage tensor (parameters hand us `param.data` views too)."""
    base = w.data
    if getattr(base, RUNAI_MARKER, False):
        return False
    return base.is_cpu


def overlap_ok_attrs(w: torch.Tensor) -> bool:
    if w.__dict__.get(RUNAI_MARKER, False):
        return False
    return w.is_cpu


class OverlapPolicies:
    """Named gates, chosen per deployment by `--overlap-policy`."""

    registry: ClassVar[dict[str, Gate]] = {}

    @classmethod
    def register(cls, name: str) -> Callable[[Gate], Gate]:
        def add(fn: Gate) -> Gate:
            cls.registry[name] = fn
            return fn

        return add

    @classmethod
    def get(cls, name: str) -> Gate:
        return cls.registry[name]


@OverlapPolicies.register("bytes")
def by_bytes(w: torch.Tensor) -> bool:
    return w.is_cpu and w.element_size() * w.numel() >= 1 << 20


@OverlapPolicies.register("owned")
def by_ownership(w: torch.Tensor) -> bool:
    return w.is_cpu and getattr(w, RUNAI_MARKER, None) is None
