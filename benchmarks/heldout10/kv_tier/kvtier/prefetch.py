"""Prefetch host KV blocks to the GPU through one pinned stage per prefetcher."""

from __future__ import annotations

import io

import numpy as np
import torch

from kvtier.fill import fill_stage, wait_then_fill

BLOCK = 16 * 128


def pinned_stage(blocks: int, dtype: torch.dtype = torch.float16) -> torch.Tensor:
    return torch.empty((blocks, BLOCK), dtype=dtype, pin_memory=True)


def prefetch_scattered(batches: list[tuple[torch.Tensor, torch.Tensor]], dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    for idx, rows in batches:
        stage.scatter_(0, idx.unsqueeze(1).expand(-1, BLOCK), rows)
        dev.copy_(stage, non_blocking=True)


def prefetch_scattered_synced(batches: list[tuple[torch.Tensor, torch.Tensor]], dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    for idx, rows in batches:
        torch.cuda.synchronize(dev.device)
        stage.scatter_(0, idx.unsqueeze(1).expand(-1, BLOCK), rows)
        dev.copy_(stage, non_blocking=True)


def prefetch_masked(masks: list[torch.Tensor], host_kv: torch.Tensor, dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    stage.copy_(host_kv)
    for mask in masks:
        stage.masked_fill_(mask.unsqueeze(1), 0.0)
        dev.copy_(stage, non_blocking=True)


def prefetch_masked_fenced(masks: list[torch.Tensor], host_kv: torch.Tensor, dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    stage.copy_(host_kv)
    fence = None
    for mask in masks:
        if fence is not None:
            fence.synchronize()
        stage.masked_fill_(mask.unsqueeze(1), 0.0)
        dev.copy_(stage, non_blocking=True)
        fence = torch.cuda.current_stream().record_event()


def prefetch_halves(pairs: list[tuple[torch.Tensor, torch.Tensor]], dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    for keys, values in pairs:
        stage.unflatten(0, (2, -1))[:] = torch.stack((keys, values))
        dev.copy_(stage, non_blocking=True)


def prefetch_halves_every_other(pairs: list[tuple[torch.Tensor, torch.Tensor]], dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    for step, (keys, values) in enumerate(pairs):
        if step % 2 == 0:
            torch.cuda.synchronize()
        stage.unflatten(0, (2, -1))[0] = keys
        dev.copy_(stage, non_blocking=True)


def prefetch_dequant(chunks: list[np.ndarray], scale: np.ndarray, dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0], torch.float32)
    for q in chunks:
        np.multiply(q, scale, out=stage.numpy())
        dev.copy_(stage, non_blocking=True)


def prefetch_dequant_finally(chunks: list[np.ndarray], scale: np.ndarray, dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0], torch.float32)
    for q in chunks:
        np.multiply(q, scale, out=stage.numpy())
        try:
            dev.copy_(stage, non_blocking=True)
        finally:
            torch.cuda.current_stream().synchronize()


def prefetch_from_file(f: io.BufferedReader, n: int, dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    for _ in range(n):
        f.readinto(memoryview(stage.numpy()).cast("B"))
        dev.copy_(stage, non_blocking=True)


def prefetch_from_file_blocking(f: io.BufferedReader, n: int, dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    for _ in range(n):
        f.readinto(memoryview(stage.numpy()).cast("B"))
        dev.copy_(stage)


def prefetch_filled(srcs: list[torch.Tensor], dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    for src in srcs:
        fill_stage(stage, src)
        dev[: src.shape[0]].copy_(stage[: src.shape[0]], non_blocking=True)


def prefetch_filled_waited(srcs: list[torch.Tensor], dev: torch.Tensor) -> None:
    stage = pinned_stage(dev.shape[0])
    copied = torch.cuda.Event()
    for src in srcs:
        wait_then_fill(stage, src, copied)
        dev[: src.shape[0]].copy_(stage[: src.shape[0]], non_blocking=True)
        copied.record()


class BlockUploader:
    """One per layer group; upload() is called once per scheduler step."""

    def __init__(self, blocks: int, device: torch.device) -> None:
        self.stage = pinned_stage(blocks)
        self.dev = torch.empty((blocks, BLOCK), dtype=torch.float16, device=device)

    def upload(self, rows: torch.Tensor) -> torch.Tensor:
        self.stage[: rows.shape[0]] = rows
        self.dev.copy_(self.stage, non_blocking=True)
        return self.dev


class FencedBlockUploader(BlockUploader):
    """Waits for the previous step's upload before refilling the stage."""

    def __init__(self, blocks: int, device: torch.device) -> None:
        super().__init__(blocks, device)
        self.copied = torch.cuda.Event()

    def upload(self, rows: torch.Tensor) -> torch.Tensor:
        self.copied.synchronize()
        self.stage[: rows.shape[0]] = rows
        self.dev.copy_(self.stage, non_blocking=True)
        self.copied.record()
        return self.dev
