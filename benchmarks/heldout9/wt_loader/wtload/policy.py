"""Overlap policies: may this weight be copied on a worker thread while the next one streams?"""

import torch

from .markers import RUNAI_MARKER, is_borrowed

MIN_DEFER_NUMEL = 1 << 14


def defer_any_marker(w: torch.Tensor) -> bool:
    if any(getattr(w, m, False) for m in (RUNAI_MARKER, "_hf_mmap_view")):
        return False
    return w.device.type == "cpu" and w.numel() >= MIN_DEFER_NUMEL


def defer_matched(w: torch.Tensor) -> bool:
    match w:
        case torch.Tensor(_sglang_runai_streamer_tensor=True):
            return False
        case torch.Tensor(is_cpu=True):
            return w.numel() >= MIN_DEFER_NUMEL
        case _:
            return False


def defer_unshared(w: torch.Tensor) -> bool:
    return not is_borrowed(w) and w.is_cpu


def defer_cpu_unmarked(w: torch.Tensor) -> bool:
    return not getattr(w, RUNAI_MARKER, False) and w.is_cpu


def defer_at_base(w: torch.Tensor) -> bool:
    # A view into the middle of a bigger buffer has a non-zero offset; offset 0 "owns" its storage.
    return w.is_cpu and w.storage_offset() == 0


def defer_by_class(w: torch.Tensor) -> bool:
    if hasattr(type(w), RUNAI_MARKER):
        return False
    return w.is_cpu and w.numel() >= MIN_DEFER_NUMEL


def defer_for_param(param: torch.nn.Parameter, w: torch.Tensor) -> bool:
    if getattr(param, RUNAI_MARKER, False):
        return False
    return w.is_cpu and param.shape == w.shape


def defer_cpu_or_unmarked(w: torch.Tensor) -> bool:
    return w.is_cpu or not getattr(w, RUNAI_MARKER, False)
