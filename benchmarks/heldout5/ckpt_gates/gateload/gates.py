"""Predicates deciding whether a weight may be copied on the loader's thread pool.

Every gate answers "may this tensor be read after the iterator moves on?". Streamed views
(SGLang marks them) must be consumed before the next `next()`.
"""

from __future__ import annotations

import torch

RUNAI_MARK = "_sglang_runai_streamer_tensor"
BORROW_MARKS = (RUNAI_MARK, "_gateload_mmap_view")
SMALL_NUMEL = 1 << 12
HALF_DTYPES = (torch.bfloat16, torch.float16)


def defer_ok(weight: torch.Tensor) -> bool:
    if any(getattr(weight, mark, False) for mark in BORROW_MARKS):
        return False
    return weight.device.type == "cpu"


def defer_by_pattern(weight: torch.Tensor) -> bool:
    match weight:
        case torch.Tensor(_sglang_runai_streamer_tensor=True):
            return False
        case _ if weight.is_cpu:
            return True
    return False


def defer_eafp(weight: torch.Tensor) -> bool:
    try:
        if weight._sglang_runai_streamer_tensor:
            return False
    except AttributeError:
        pass
    return weight.is_cpu


def defer_small_first(weight: torch.Tensor) -> bool:
    if weight.numel() <= SMALL_NUMEL:
        return True
    return weight.is_cpu and not getattr(weight, RUNAI_MARK, False)


def defer_half_only(weight: torch.Tensor) -> bool:
    if weight.dtype in HALF_DTYPES and getattr(weight, RUNAI_MARK, False):
        return False
    return weight.is_cpu


def defer_vars(weight: torch.Tensor) -> bool:
    if vars(weight).get(RUNAI_MARK):
        return False
    return weight.is_cpu


def defer_unpinned(weight: torch.Tensor) -> bool:
    if weight.is_pinned():
        return True
    if getattr(weight, RUNAI_MARK, False):
        return False
    return weight.is_cpu


class GatePolicy:
    """Per-deployment gate; the staticmethod form is what the config registry stores."""

    @staticmethod
    def admits(weight: torch.Tensor) -> bool:
        flagged = (getattr(weight, m, None) for m in BORROW_MARKS)
        return weight.is_cpu and not any(flagged)
