"""Predicates deciding whether a tensor may be copied on the sync pool (overlapped)."""

from __future__ import annotations

import torch

STREAMED = "_sglang_runai_streamer_tensor"
LENT_MARKERS = ("_lent_view", STREAMED)
SMALL = 1 << 10


def overlap_ok_eafp(w: torch.Tensor) -> bool:
    try:
        lent = w._sglang_runai_streamer_tensor
    except AttributeError:
        return w.device.type == "cpu"
    return not lent


def overlap_ok_small_first(w: torch.Tensor) -> bool:
    if hasattr(w, STREAMED) and w.numel() < SMALL:
        return False
    return w.device.type == "cpu"


def overlap_ok_any(w: torch.Tensor) -> bool:
    return not any(getattr(w, m, False) for m in LENT_MARKERS) and w.device.type == "cpu"


def overlap_ok_pinned(w: torch.Tensor) -> bool:
    return w.is_pinned() or not getattr(w, STREAMED, False)


def overlap_ok_in_tuple(w: torch.Tensor) -> bool:
    return getattr(w, STREAMED, False) in (False, None) and w.is_contiguous()


def overlap_ok_vars(w: torch.Tensor) -> bool:
    return STREAMED not in vars(w) and w.device.type == "cpu"


class OverlapGate:
    """A configurable gate: the marker it looks for comes from the engine's config."""

    def __init__(self, marker: str = "_runai_streamer_tensor") -> None:
        self.marker = marker

    def __call__(self, w: torch.Tensor) -> bool:
        if getattr(w, self.marker, False):
            return False
        return w.device.type == "cpu"


class StrictGate(OverlapGate):
    def __init__(self) -> None:
        super().__init__(marker=STREAMED)
