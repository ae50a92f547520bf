"""Predicates deciding whether a host tensor may be copied on a pool thread."""
from __future__ import annotations

import torch

# Producers that hand out views of a buffer they refill mark them with one of these.
_BORROWED_ATTRS = ("_sglang_runai_streamer_tensor", "_hloader_borrowed")

_ASYNC_MIN_NUMEL = 4096


def may_defer(t: torch.Tensor) -> bool:
    """True when copying ``t`` later, on another thread, reads the same bytes."""
    if any(getattr(t, attr, False) for attr in _BORROWED_ATTRS):
        return False
    return t.device.type == "cpu" and t.numel() >= _ASYNC_MIN_NUMEL


def is_large_cpu(t: torch.Tensor) -> bool:
    """Large host tensors are worth a pool round-trip; small ones are copied inline."""
    return t.device.type == "cpu" and t.numel() * t.element_size() > (1 << 20)
