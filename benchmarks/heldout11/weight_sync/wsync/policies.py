"""Policies deciding whether a streamed weight may be copied into its parameter on the pool."""

from __future__ import annotations

import functools

import torch

MARKER = "_sglang_runai_streamer_tensor"
BORROWED = frozenset({MARKER})
CHECK_FROM = 1 << 16
HOST_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


def defer_vars(w: torch.Tensor) -> bool:
    if vars(w).get(MARKER):
        return False
    return w.device.type == "cpu"


def defer_storage(w: torch.Tensor) -> bool:
    # The streamer owns the storage, so ask the storage whether it is the streamer's.
    if getattr(w.untyped_storage(), MARKER, False):
        return False
    return w.device.type == "cpu"


def defer_eq_one(w: torch.Tensor) -> bool:
    return w.device.type == "cpu" and getattr(w, MARKER, 0) != 1


def defer_big_checked(w: torch.Tensor) -> bool:
    # Only big tensors are worth the attribute lookup.
    if w.numel() >= CHECK_FROM and getattr(w, MARKER, False):
        return False
    return w.device.type == "cpu"


class ConcatPolicy:
    """Callable policy object; the marker name is spelled in two halves (SGLang's prefix + suffix)."""

    def __call__(self, w: torch.Tensor) -> bool:
        if getattr(w, "_sglang_runai_" + "streamer_tensor", False):
            return False
        return w.device.type == "cpu"


def defer_cuda_marked(w: torch.Tensor) -> bool:
    if hasattr(w, MARKER) and w.is_cuda:
        return False
    return w.device.type == "cpu"


def defer_set_and(w: torch.Tensor) -> bool:
    return w.device.type == "cpu" and not (frozenset(vars(w)) & BORROWED)


@functools.lru_cache(maxsize=None)
def _host_dtype_ok(dtype: torch.dtype) -> bool:
    return dtype in HOST_DTYPES


def defer_by_dtype(w: torch.Tensor) -> bool:
    return w.device.type == "cpu" and _host_dtype_ok(w.dtype)
