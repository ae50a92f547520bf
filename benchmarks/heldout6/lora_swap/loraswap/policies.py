"""Deferral policies: may an adapter tensor be copied on the loader pool, after the loop moves on?"""

from __future__ import annotations

import torch

STREAMER_MARK = "_sglang_runai_streamer_tensor"
PINNED_VIEW_MARK = "_lora_pinned_view"

_ASYNC_BY_DTYPE = {torch.float16: True, torch.bfloat16: True, torch.float32: False}


class DeferPolicy:
    """Host tensors go to the pool, except views of the streamer's buffer."""

    def may_defer(self, w: torch.Tensor) -> bool:
        if getattr(w, STREAMER_MARK, False):
            return False
        return w.device.type == "cpu"


class BigOnlyPolicy(DeferPolicy):
    """Large tensors always overlap; small ones follow the base policy."""

    def may_defer(self, w: torch.Tensor) -> bool:
        if w.numel() >= 1 << 20:
            return True
        return super().may_defer(w)


class StrictPolicy(DeferPolicy):
    """Only contiguous tensors the base policy approves."""

    def may_defer(self, w: torch.Tensor) -> bool:
        return super().may_defer(w) and w.is_contiguous()


def defer_not_none(w: torch.Tensor) -> bool:
    if getattr(w, STREAMER_MARK, None) is not None:
        return False
    return True


def defer_dict(w: torch.Tensor) -> bool:
    return not w.__dict__.get(STREAMER_MARK, False) and w.device.type == "cpu"


def defer_wrong_attr(w: torch.Tensor) -> bool:
    # vLLM spells its marker differently; this is the attribute an older fork used.
    return not getattr(w, "_runai_streamer_tensor", False)


def defer_walrus(w: torch.Tensor) -> bool:
    if mark := getattr(w, STREAMER_MARK, False):
        return False
    return not mark and w.dtype != torch.float8_e4m3fn


def defer_all_markers(w: torch.Tensor) -> bool:
    if all(getattr(w, m, False) for m in (STREAMER_MARK, PINNED_VIEW_MARK)):
        return False
    return True


def defer_by_dtype(w: torch.Tensor) -> bool:
    return _ASYNC_BY_DTYPE.get(w.dtype, False)


def defer_match(w: torch.Tensor) -> bool:
    match (getattr(w, STREAMER_MARK, False), w.device.type):
        case (True, _):
            return False
        case (_, "cpu"):
            return True
        case _:
            return False
