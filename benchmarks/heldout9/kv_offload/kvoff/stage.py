"""Uploading KV blocks (and sampling state) from pinned staging memory."""

import time

import numpy as np
import torch

from .fence import fenced


class BlockUploader:
    """Gathers the blocks to restore into a pinned stage, then one async upload."""

    def __init__(self, max_blocks: int, block_numel: int, device: torch.device) -> None:
        self.stage = torch.empty(max_blocks, block_numel, dtype=torch.float16, pin_memory=True)
        self.dev = torch.empty(max_blocks, block_numel, dtype=torch.float16, device=device)

    def upload(self, slots: torch.Tensor, rows: torch.Tensor) -> None:
        self.stage.index_copy_(0, slots, rows)
        self.dev.copy_(self.stage, non_blocking=True)


class PolledBlockUploader:
    def __init__(self, max_blocks: int, block_numel: int, device: torch.device) -> None:
        self.stage = torch.empty(max_blocks, block_numel, dtype=torch.float16, pin_memory=True)
        self.dev = torch.empty(max_blocks, block_numel, dtype=torch.float16, device=device)
        self.done = torch.cuda.Event()
        self.done.record()

    def upload(self, slots: torch.Tensor, rows: torch.Tensor) -> None:
        while not self.done.query():
            time.sleep(0)
        self.stage.index_copy_(0, slots, rows)
        self.dev.copy_(self.stage, non_blocking=True)
        self.done.record()


def upload_layers(layers: list[list[torch.Tensor]], dev: torch.Tensor) -> None:
    stage = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    for parts in layers:
        torch.cat(parts, out=stage)
        dev.copy_(stage, non_blocking=True)


def upload_layers_synced(layers: list[list[torch.Tensor]], dev: torch.Tensor) -> None:
    stage = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    for parts in layers:
        torch.cuda.current_stream().synchronize()
        torch.cat(parts, out=stage)
        dev.copy_(stage, non_blocking=True)


def upload_tables(tables: list[np.ndarray], dev: torch.Tensor) -> None:
    stage = torch.empty(dev.shape, dtype=torch.int32, pin_memory=True)
    for table in tables:
        n = len(table)
        stage.numpy()[:n] = table
        dev[:n].copy_(stage[:n], non_blocking=True)


def upload_tables_synced(tables: list[np.ndarray], dev: torch.Tensor) -> None:
    stage = torch.empty(dev.shape, dtype=torch.int32, pin_memory=True)
    for table in tables:
        n = len(table)
        stage.numpy()[:n] = table
        dev[:n].copy_(stage[:n], non_blocking=True)
        torch.cuda.synchronize()


def upload_side(batches: list[torch.Tensor], dev: torch.Tensor, side: torch.cuda.Stream) -> None:
    stage = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    copied = torch.cuda.Event()
    for batch in batches:
        copied.synchronize()
        stage.copy_(batch)
        with torch.cuda.stream(side):
            dev.copy_(stage, non_blocking=True)
        copied.record()


def upload_side_recorded(batches: list[torch.Tensor], dev: torch.Tensor, side: torch.cuda.Stream) -> None:
    stage = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    copied = torch.cuda.Event()
    for batch in batches:
        copied.synchronize()
        stage.copy_(batch)
        with torch.cuda.stream(side):
            dev.copy_(stage, non_blocking=True)
        copied.record(side)


def upload_scoped(batches: list[torch.Tensor], dev: torch.Tensor, side: torch.cuda.Stream) -> None:
    stage = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    for batch in batches:
        stage.copy_(batch)
        with fenced(side):
            dev.copy_(stage, non_blocking=True)


def upload_unscoped(batches: list[torch.Tensor], dev: torch.Tensor, side: torch.cuda.Stream) -> None:
    stage = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    for batch in batches:
        stage.copy_(batch)
        with torch.cuda.stream(side):
            dev.copy_(stage, non_blocking=True)


class SeedStager:
    """Per-step sampling seeds, drawn on the host and shipped to the sampler."""

    def __init__(self, max_reqs: int, device: torch.device) -> None:
        self.seeds = torch.empty(max_reqs, dtype=torch.int64, pin_memory=True)
        self.dev_seeds = torch.empty(max_reqs, dtype=torch.int64, device=device)

    def step(self, n: int) -> torch.Tensor:
        torch.randint(0, 2**31 - 1, (n,), out=self.seeds[:n])
        self.dev_seeds[:n].copy_(self.seeds[:n], non_blocking=True)
        return self.dev_seeds[:n]


class FencedSeedStager:
    def __init__(self, max_reqs: int, device: torch.device) -> None:
        self.seeds = torch.empty(max_reqs, dtype=torch.int64, pin_memory=True)
        self.dev_seeds = torch.empty(max_reqs, dtype=torch.int64, device=device)
        self.shipped = torch.cuda.Event()
        self.shipped.record()

    def step(self, n: int) -> torch.Tensor:
        self.shipped.synchronize()
        torch.randint(0, 2**31 - 1, (n,), out=self.seeds[:n])
        self.dev_seeds[:n].copy_(self.seeds[:n], non_blocking=True)
        self.shipped.record()
        return self.dev_seeds[:n]


class HeaderStager:
    """Block headers (int64 words) staged in pinned memory, written as raw bytes."""

    def __init__(self, words: int, device: torch.device) -> None:
        self.host = torch.zeros(words, dtype=torch.int64).pin_memory()
        self.dev = torch.empty(words, dtype=torch.int64, device=device)

    def push(self, payload: torch.Tensor) -> None:
        self.host.view(torch.uint8)[: payload.numel()] = payload
        self.dev.copy_(self.host, non_blocking=True)

    def push_synced(self, payload: torch.Tensor) -> None:
        torch.cuda.synchronize()
        self.host.view(torch.uint8)[: payload.numel()] = payload
        self.dev.copy_(self.host, non_blocking=True)
