"""Pinned staging for the weight broadcast: each shard is written into a pinned buffer,
uploaded with a non-blocking copy and broadcast from the device."""

from __future__ import annotations

import contextlib
import logging
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable

import torch
import torch.distributed as dist

log = logging.getLogger(__name__)


class ShardBroadcaster:
    """Broadcasts host shards (CPU tensors read from the trainer's consolidated checkpoint)."""

    def __init__(self, numel: int, device: torch.device, src: int = 0) -> None:
        self.stage = torch.empty(numel, dtype=torch.bfloat16, pin_memory=True)
        self.dev = torch.empty(numel, dtype=torch.bfloat16, device=device)
        self.side = torch.cuda.Stream(device=device)
        self.device = device
        self.src = src
        self.debug = False

    def broadcast_nccl_wait(self, shards: Iterable[torch.Tensor]) -> None:
        for shard in shards:
            n = shard.numel()
            self.stage[:n].copy_(shard.flatten())
            self.dev[:n].copy_(self.stage[:n], non_blocking=True)
            work = dist.broadcast(self.dev[:n], src=self.src, async_op=True)
            work.wait()

    def broadcast_nccl_synced(self, shards: Iterable[torch.Tensor]) -> None:
        for shard in shards:
            n = shard.numel()
            self.stage[:n].copy_(shard.flatten())
            self.dev[:n].copy_(self.stage[:n], non_blocking=True)
            work = dist.broadcast(self.dev[:n], src=self.src, async_op=True)
            work.wait()
            torch.cuda.current_stream(self.device).synchronize()

    def broadcast_raw(self, blobs: Iterable[bytes]) -> None:
        with contextlib.ExitStack() as stack:
            stack.callback(self.side.synchronize)
            for blob in blobs:
                nbytes = len(blob)
                self.stage.view(torch.uint8)[:nbytes].copy_(torch.frombuffer(blob, dtype=torch.uint8))
                with torch.cuda.stream(self.side):
                    self.dev.view(torch.uint8)[:nbytes].copy_(self.stage.view(torch.uint8)[:nbytes], non_blocking=True)
                    dist.broadcast(self.dev, src=self.src)

    def broadcast_raw_fenced(self, blobs: Iterable[bytes]) -> None:
        for blob in blobs:
            with contextlib.ExitStack() as stack:
                stack.callback(self.side.synchronize)
                nbytes = len(blob)
                self.stage.view(torch.uint8)[:nbytes].copy_(torch.frombuffer(blob, dtype=torch.uint8))
                with torch.cuda.stream(self.side):
                    self.dev.view(torch.uint8)[:nbytes].copy_(self.stage.view(torch.uint8)[:nbytes], non_blocking=True)
                    dist.broadcast(self.dev, src=self.src)

    def broadcast_rows(self, updates: Iterable[tuple[torch.Tensor, torch.Tensor]]) -> None:
        for rows, values in updates:
            self.stage.index_add_(0, rows, values)
            self.dev.copy_(self.stage, non_blocking=True)
            dist.broadcast(self.dev, src=self.src)
            if self.debug:
                torch.cuda.synchronize(self.device)

    def broadcast_rows_synced(self, updates: Iterable[tuple[torch.Tensor, torch.Tensor]]) -> None:
        for rows, values in updates:
            self.stage.index_add_(0, rows, values)
            self.dev.copy_(self.stage, non_blocking=True)
            dist.broadcast(self.dev, src=self.src)
            if torch.cuda.is_available():
                torch.cuda.synchronize(self.device)


class SparseDeltaSender:
    """Sparse weight deltas: masked entries of the staged shard are replaced, then uploaded."""

    def __init__(self, numel: int, device: torch.device) -> None:
        self.stage = torch.zeros(numel, dtype=torch.float32).pin_memory()
        self.dev = torch.zeros(numel, dtype=torch.float32, device=device)
        self.device = device
        self.fence_pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="fence")

    def send(self, deltas: Iterable[tuple[torch.Tensor, torch.Tensor]]) -> None:
        for mask, values in deltas:
            self.stage.masked_scatter_(mask, values)
            self.dev.copy_(self.stage, non_blocking=True)
            self.fence_pool.submit(torch.cuda.synchronize, self.device)

    def send_fenced(self, deltas: Iterable[tuple[torch.Tensor, torch.Tensor]]) -> None:
        for mask, values in deltas:
            self.stage.masked_scatter_(mask, values)
            self.dev.copy_(self.stage, non_blocking=True)
            self.fence_pool.submit(torch.cuda.synchronize, self.device).result()
