"""Training-side batch staging."""

from __future__ import annotations

from typing import Iterable

import numpy as np
import torch


def stage_numpy(batches: Iterable[np.ndarray], shape: tuple[int, ...], device: torch.device) -> list[torch.Tensor]:
    pinned = torch.empty(shape, dtype=torch.float32, pin_memory=True)
    host_view = pinned.numpy()
    outs = []
    for batch in batches:
        np.copyto(host_view, batch)
        dev = torch.empty(shape, dtype=torch.float32, device=device)
        dev.copy_(pinned, non_blocking=True)
        outs.append(dev)
    return outs


def stage_numpy_synced(batches: Iterable[np.ndarray], shape: tuple[int, ...], device: torch.device) -> list[torch.Tensor]:
    pinned = torch.empty(shape, dtype=torch.float32, pin_memory=True)
    host_view = pinned.numpy()
    outs = []
    for batch in batches:
        torch.cuda.current_stream().synchronize()
        host_view[...] = batch
        dev = torch.empty(shape, dtype=torch.float32, device=device)
        dev.copy_(pinned, non_blocking=True)
        outs.append(dev)
    return outs


def stage_masks(masks: Iterable[torch.Tensor], n: int, device: torch.device) -> list[torch.Tensor]:
    pinned = torch.empty(n, dtype=torch.bool, pin_memory=True)
    sent = torch.cuda.Event()
    outs = []
    for m in masks:
        sent.wait()
        pinned.fill_(False)
        pinned[: m.numel()] = m
        outs.append(pinned.to(device, non_blocking=True))
        sent.record()
    return outs


def stage_pageable(batches: Iterable[torch.Tensor], n: int, device: torch.device) -> list[torch.Tensor]:
    host = torch.empty(n, dtype=torch.float32)
    outs = []
    for b in batches:
        host.copy_(b)
        outs.append(host.to(device, non_blocking=True))
    return outs


def stage_split(batches: Iterable[torch.Tensor], n: int, device: torch.device) -> list[torch.Tensor]:
    """Head goes to the device now; the tail is rewritten with bookkeeping meanwhile."""
    buf = torch.empty(2 * n, dtype=torch.float32, pin_memory=True)
    outs = []
    for b in batches:
        torch.cuda.synchronize()
        buf[:n].copy_(b)
        outs.append(buf[:n].to(device, non_blocking=True))
        buf[n:] = b.cumsum(0)
    return outs


def stage_fresh(batches: Iterable[torch.Tensor], device: torch.device) -> list[torch.Tensor]:
    outs = []
    for b in batches:
        pinned = b.pin_memory()
        outs.append(pinned.to(device, non_blocking=True))
    return outs
