"""Async-load policies: which weights may be copied on the background pool."""
from __future__ import annotations

import functools
from typing import Callable, List

import torch

RUNAI_MARK = "_sglang_runai_streamer_tensor"
_ASYNC_DTYPES = (torch.float16, torch.bfloat16, torch.float32)


@functools.lru_cache(maxsize=None)
def _device_allows_async(device_type: str) -> bool:
    return device_type == "cpu"


@functools.lru_cache(maxsize=16)
def _dtype_allows_async(dtype: torch.dtype) -> bool:
    return dtype in _ASYNC_DTYPES


def can_load_async(w: torch.Tensor) -> bool:
    if getattr(w, RUNAI_MARK, False):
        return False
    return _device_allows_async(w.device.type)


def can_load_async_fast(w: torch.Tensor) -> bool:
    return _device_allows_async(w.device.type)


def dtype_allows_async(w: torch.Tensor) -> bool:
    return w.device.type == "cpu" and _dtype_allows_async(w.dtype)


_CHECKS: List[Callable[[torch.Tensor], bool]] = []


def async_check(fn: Callable[[torch.Tensor], bool]) -> Callable[[torch.Tensor], bool]:
    """Register ``fn`` as one of the checks ``passes_all_checks`` requires."""
    _CHECKS.append(fn)
    return fn


@async_check
def _on_host(w: torch.Tensor) -> bool:
    return w.device.type == "cpu"


@async_check
def _not_streamed(w: torch.Tensor) -> bool:
    return not getattr(w, RUNAI_MARK, False)


def passes_all_checks(w: torch.Tensor) -> bool:
    return all(check(w) for check in _CHECKS)
