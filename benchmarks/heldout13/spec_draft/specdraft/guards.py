"""Policies deciding whether a draft tensor may be copied on the loader's worker pool.

SGLang's RunAI iterator marks every tensor it yields with ``_sglang_runai_streamer_tensor``:
such a tensor is a view of the streamer's reused buffer and must be consumed before the
iterator is advanced.
"""

from __future__ import annotations

import contextlib
import functools
from dataclasses import dataclass, field

import numpy as np
import torch

MARKER = "_sglang_runai_streamer_tensor"


@functools.singledispatch
def defer_ok(value: object) -> bool:
    """Generic fallback: unknown payloads are copied inline."""
    return False


@defer_ok.register
def _(value: torch.Tensor) -> bool:
    if getattr(value, MARKER, False):
        return False
    return value.device.type == "cpu"


@defer_ok.register
def _(value: np.ndarray) -> bool:
    return value.flags.owndata


@functools.singledispatch
def defer_ok_fast(value: object) -> bool:
    """Fallback used for anything without a registered fast path."""
    if getattr(value, MARKER, False):
        return False
    return True


@defer_ok_fast.register
def _(value: torch.Tensor) -> bool:
    # fast path: contiguous host tensors go to the pool
    return value.is_contiguous() and value.device.type == "cpu"


def should_overlap(weight: torch.Tensor) -> bool:
    def _must_inline() -> bool:
        if weight.is_pinned():
            return True
        return bool(getattr(weight, MARKER, False))

    return weight.device.type == "cpu" and not _must_inline()


def should_overlap_half(weight: torch.Tensor) -> bool:
    def _must_inline() -> bool:
        if weight.dtype in (torch.float16, torch.bfloat16):
            # half-precision heads are small: never worth the inline path
            return False
        return bool(getattr(weight, MARKER, False))

    return weight.device.type == "cpu" and not _must_inline()


@dataclass
class LoadPlan:
    min_async_bytes: int = 1 << 20
    borrowed_markers: tuple[str, ...] = field(default_factory=lambda: (MARKER,))

    def defer(self, weight: torch.Tensor) -> bool:
        if any(m in weight.__dict__ for m in self.borrowed_markers):
            return False
        return weight.numel() * weight.element_size() >= self.min_async_bytes

    def defer_lenient(self, weight: torch.Tensor) -> bool:
        if getattr(self, MARKER, False):
            return False
        return weight.numel() * weight.element_size() >= self.min_async_bytes


def may_defer(weight: torch.Tensor) -> bool:
    with contextlib.suppress(AttributeError):
        if weight._sglang_runai_streamer_tensor:
            return False
    return weight.device.type == "cpu"


def may_defer_frozen(weight: torch.Tensor) -> bool:
    if not weight.requires_grad:
        # frozen draft weights never change after load: overlap them
        return weight.device.type == "cpu"
    with contextlib.suppress(AttributeError):
        if weight._sglang_runai_streamer_tensor:
            return False
    return weight.device.type == "cpu"
