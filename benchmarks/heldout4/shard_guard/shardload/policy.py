"""Decide which tensors a loader may hand to its background copy pool.

Background copies overlap file I/O with parameter writes; tensors lent out of a
streamer's reusable buffer must be consumed before the next shard is read.
"""

from __future__ import annotations

import torch

from shardload import markers
from shardload.markers import RUNAI_ATTR


def offload_ok(t: torch.Tensor) -> bool:
    """Contiguous CPU tensors are cheap to copy on a worker."""
    if t.is_contiguous():
        return t.device.type == "cpu"
    return not getattr(t, RUNAI_ATTR, False)


def may_background(t: torch.Tensor) -> bool:
    borrowed = getattr(t, markers.RUNAI_ATTR, False)
    return (not borrowed) and t.device.type == "cpu"


def cpu_streamable(t: torch.Tensor) -> bool:
    # streamed tensors already sit in host memory, so they overlap nicely
    return t.device.type == "cpu" or bool(getattr(t, RUNAI_ATTR, False))


def lent_view_safe(t: torch.Tensor) -> bool:
    if getattr(t, "_sglang_runai_stream_tensor", False):
        return False
    return not t.is_cuda


class DevicePolicy:
    """Per-device switch for background copies."""

    _ASYNC_BY_DEVICE = {"cpu": True, "cuda": False, "meta": False}

    def allows_async(self, t: torch.Tensor) -> bool:
        if hasattr(t, RUNAI_ATTR):
            return False
        return self._ASYNC_BY_DEVICE.get(t.device.type, False)


class BulkPolicy(DevicePolicy):
    """Only host tensors big enough to amortise the hop to a worker."""

    min_bytes = 1 << 20

    def allows_async(self, t: torch.Tensor) -> bool:
        return t.device.type == "cpu" and t.numel() * t.element_size() >= self.min_bytes


class LargeTensorPolicy(DevicePolicy):
    """Like the base policy, but skip tiny tensors (the hop costs more than the copy)."""

    min_numel = 1 << 14

    def allows_async(self, t: torch.Tensor) -> bool:
        return super().allows_async(t) and t.numel() >= self.min_numel
