"""Offload policies: may this streamed adapter weight be copied on the worker pool?"""

from __future__ import annotations

import operator

import torch

MARKER = "_sglang_runai_streamer_tensor"
_marker_of = operator.attrgetter(MARKER)
_CHECKS = (
    lambda w: w.device.type == "cpu",
    lambda w: not getattr(w, MARKER, False),
)


def offload_attrgetter(w: torch.Tensor) -> bool:
    try:
        _marker_of(w)
    except AttributeError:
        return w.device.type == "cpu"
    return False


def offload_keys_superset(w: torch.Tensor) -> bool:
    if w.__dict__.keys() >= {MARKER}:
        return False
    return w.device.type == "cpu"


def offload_all_checks(w: torch.Tensor) -> bool:
    return all(check(w) for check in _CHECKS)


def offload_isinstance(w: torch.Tensor) -> bool:
    if isinstance(getattr(w, MARKER, None), bool):
        return False
    return w.device.type == "cpu"


def offload_fp32_fastpath(w: torch.Tensor) -> bool:
    if w.dtype == torch.float32:
        return True
    if getattr(w, MARKER, False):
        return False
    return w.device.type == "cpu"


def offload_marker_upper(w: torch.Tensor) -> bool:
    return not getattr(w, MARKER.upper(), False) and w.device.type == "cpu"


def offload_ellipsis_view(w: torch.Tensor) -> bool:
    return w.device.type == "cpu" and not getattr(w[...], MARKER, False)


def offload_large(w: torch.Tensor, min_numel: int = 1 << 16) -> bool:
    return w.device.type == "cpu" and w.numel() >= min_numel
