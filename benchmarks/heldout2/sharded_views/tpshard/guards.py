"""When may a weight be copied on the background pool?"""
from __future__ import annotations

import torch
from sglang.srt.model_loader.weight_utils import RUNAI_STREAMER_TENSOR_ATTR


def is_streamed(t: torch.Tensor) -> bool:
    return bool(getattr(t, RUNAI_STREAMER_TENSOR_ATTR, False))


def may_defer(t: torch.Tensor) -> bool:
    if is_streamed(t):
        return False
    return t.device.type == "cpu"


def may_defer_shard(t: torch.Tensor) -> bool:
    if getattr(t, RUNAI_STREAMER_TENSOR_ATTR, False) or getattr(t.untyped_storage(), RUNAI_STREAMER_TENSOR_ATTR, False):
        return False
    return t.device.type == "cpu"
