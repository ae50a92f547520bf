"""Prefetch a window of training batches to the GPU through a pinned staging buffer."""
from __future__ import annotations

from typing import Sequence

import torch


def prefetch(batches: Sequence[torch.Tensor], dev_out: torch.Tensor) -> torch.Tensor:
    staging = torch.empty(dev_out.shape[1:], dtype=dev_out.dtype, pin_memory=True)
    for i, batch in enumerate(batches):
        staging.copy_(batch)
        dev_out[i].copy_(staging, non_blocking=True)
    return dev_out


def prefetch_fenced(batches: Sequence[torch.Tensor], dev_out: torch.Tensor) -> torch.Tensor:
    staging = torch.empty(dev_out.shape[1:], dtype=dev_out.dtype, pin_memory=True)
    copied = torch.cuda.Event()
    for i, batch in enumerate(batches):
        copied.synchronize()
        staging.copy_(batch)
        dev_out[i].copy_(staging, non_blocking=True)
        copied.record()
    return dev_out


def prefetch_flat(batches: Sequence[torch.Tensor], dev_out: torch.Tensor) -> torch.Tensor:
    staging = torch.empty(dev_out[0].numel(), dtype=dev_out.dtype, pin_memory=True)
    landed = torch.cuda.Event()
    for i, batch in enumerate(batches):
        torch.cuda.current_stream().wait_event(landed)
        staging[: batch.numel()] = batch.reshape(-1)
        dev_out[i].view(-1).copy_(staging, non_blocking=True)
        landed.record()
    return dev_out


def prefetch_pageable(batches: Sequence[torch.Tensor], dev_out: torch.Tensor) -> torch.Tensor:
    host = torch.empty(dev_out.shape[1:], dtype=dev_out.dtype)
    for i, batch in enumerate(batches):
        host.copy_(batch)
        dev_out[i].copy_(host, non_blocking=True)
    return dev_out


def prefetch_double_buffered(batches: Sequence[torch.Tensor], dev_out: torch.Tensor) -> torch.Tensor:
    slots = [torch.empty(dev_out.shape[1:], dtype=dev_out.dtype, pin_memory=True) for _ in range(2)]
    fences = [torch.cuda.Event() for _ in range(2)]
    for i, batch in enumerate(batches):
        k = i % 2
        fences[k].synchronize()
        slots[k].copy_(batch)
        dev_out[i].copy_(slots[k], non_blocking=True)
        fences[k].record()
    return dev_out
