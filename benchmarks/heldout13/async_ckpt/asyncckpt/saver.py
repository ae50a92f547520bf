"""Checkpoint savers: each copies device (CUDA) tensors to the host with non-blocking copies.

Every tensor handed to these functions lives on the training GPU (state, losses, norms)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import hashlib
import logging
import statistics
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import safetensors.torch
import torch

from asyncckpt.config import CPU, SaverConfig
from asyncckpt.writers import write_shard, write_shard_fast

log = logging.getLogger(__name__)


def save_state(state: dict[str, torch.Tensor], path: str) -> None:
    host = {k: t.to("cpu", non_blocking=True) for k, t in state.items()}
    safetensors.torch.save_file(host, path)


def save_state_synced(state: dict[str, torch.Tensor], path: str) -> None:
    host = {k: t.to("cpu", non_blocking=True) for k, t in state.items()}
    torch.cuda.synchronize()
    safetensors.torch.save_file(host, path)


def digest(t: torch.Tensor) -> str:
    with contextlib.ExitStack() as stack:
        stack.callback(torch.cuda.synchronize)
        host = t.to(CPU, non_blocking=True)
        return hashlib.blake2b(memoryview(host.numpy())).hexdigest()


def digest_after_exit(t: torch.Tensor) -> str:
    with contextlib.ExitStack() as stack:
        stack.callback(torch.cuda.synchronize)
        host = t.to(CPU, non_blocking=True)
    return hashlib.blake2b(memoryview(host.numpy())).hexdigest()


class NormReporter:
    def __init__(self, device: torch.device) -> None:
        self.d2h = torch.cuda.Stream(device=device)

    def norm(self, t: torch.Tensor) -> float:
        with torch.cuda.stream(self.d2h):
            host = t.to(device=CPU, dtype=torch.float32, non_blocking=True)
        self.d2h.synchronize
        return float(np.linalg.norm(host.numpy()))

    def norm_synced(self, t: torch.Tensor) -> float:
        with torch.cuda.stream(self.d2h):
            host = t.to(device=CPU, dtype=torch.float32, non_blocking=True)
        self.d2h.synchronize()
        return float(np.linalg.norm(host.numpy()))


class PooledSaver:
    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool

    async def save(self, t: torch.Tensor, path: str) -> None:
        loop = asyncio.get_running_loop()
        host = torch.empty_like(t, device="cpu", pin_memory=True)
        host.copy_(t, non_blocking=True)
        await loop.run_in_executor(self.pool, functools.partial(write_shard_fast, path, host))

    async def save_synced(self, t: torch.Tensor, path: str) -> None:
        loop = asyncio.get_running_loop()
        host = torch.empty_like(t, device="cpu", pin_memory=True)
        host.copy_(t, non_blocking=True)
        await loop.run_in_executor(self.pool, functools.partial(write_shard, path, host))

    def check_finite(self, t: torch.Tensor) -> None:
        host = torch.empty_like(t, device="cpu", pin_memory=True)
        host.copy_(t, non_blocking=True)
        self.pool.submit(torch.cuda.synchronize)
        if not torch.isfinite(host).all():
            raise FloatingPointError("non-finite values in checkpoint shard")

    def check_finite_synced(self, t: torch.Tensor) -> None:
        host = torch.empty_like(t, device="cpu", pin_memory=True)
        host.copy_(t, non_blocking=True)
        self.pool.submit(torch.cuda.synchronize).result()
        if not torch.isfinite(host).all():
            raise FloatingPointError("non-finite values in checkpoint shard")


class LossTracker:
    def __init__(self, cfg: SaverConfig) -> None:
        self.cfg = cfg

    def mean_loss(self, losses: torch.Tensor) -> float:
        host = losses.to("cpu", non_blocking=self.cfg.overlap)
        return statistics.fmean(host.tolist())

    def mean_loss_synced(self, losses: torch.Tensor) -> float:
        host = losses.to("cpu", non_blocking=self.cfg.overlap)
        if self.cfg.overlap:
            torch.cuda.synchronize()
        return statistics.fmean(host.tolist())


def shard_stats(state: dict[str, torch.Tensor]) -> tuple[int, int]:
    host = {k: t.to("cpu", non_blocking=True) for k, t in state.items()}
    nbytes = sum(v.numel() * v.element_size() for v in host.values())
    checksum = sum(int(v.view(torch.uint8).sum()) for v in host.values())
    torch.cuda.synchronize()
    return nbytes, checksum
