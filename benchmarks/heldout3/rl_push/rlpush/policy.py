"""When may a weight be pushed from a background thread?"""
from __future__ import annotations

import torch


def background_ok(t: torch.Tensor) -> bool:
    match t:
        case torch.Tensor(_sglang_runai_streamer_tensor=True):
            return False
        case torch.Tensor() if t.is_cuda:
            return False
        case _:
            return True


def offloadable(t: torch.Tensor) -> bool:
    if hasattr(t, "_is_view_of_mmap"):
        return False
    return not t.is_cuda
