"""Host-to-device uploads through pinned staging memory."""
from __future__ import annotations

from typing import Iterable, Sequence

import torch


class StagedUploader:
    """Packs many small host tensors into one pinned buffer and uploads them in order."""

    def __init__(self, nbytes: int) -> None:
        self.staging = torch.empty(nbytes, dtype=torch.uint8, pin_memory=True)
        self.copied = torch.cuda.Event()

    def upload_all(self, chunks: Iterable[torch.Tensor], dst: torch.Tensor) -> None:
        off = 0
        for chunk in chunks:
            n = chunk.numel()
            self.staging[:n].copy_(chunk)
            dst[off:off + n].copy_(self.staging[:n], non_blocking=True)
            off += n

    def upload_all_synced(self, chunks: Iterable[torch.Tensor], dst: torch.Tensor) -> None:
        off = 0
        for chunk in chunks:
            n = chunk.numel()
            self.copied.synchronize()
            self.staging[:n].copy_(chunk)
            dst[off:off + n].copy_(self.staging[:n], non_blocking=True)
            self.copied.record()
            off += n


def read_shards(paths: Sequence[str], dsts: Sequence[torch.Tensor], chunk_bytes: int) -> None:
    buf = torch.empty(chunk_bytes, dtype=torch.uint8).pin_memory()
    view = buf.numpy()
    for path, dst in zip(paths, dsts):
        with open(path, "rb") as f:
            n = f.readinto(view)
        dst.copy_(buf[:n], non_blocking=True)


def read_shards_double(paths: Sequence[str], dsts: Sequence[torch.Tensor], chunk_bytes: int) -> None:
    bufs = [torch.empty(chunk_bytes, dtype=torch.uint8, pin_memory=True) for _ in range(2)]
    events = [torch.cuda.Event(), torch.cuda.Event()]
    for i, (path, dst) in enumerate(zip(paths, dsts)):
        slot = i % 2
        events[slot].synchronize()
        with open(path, "rb") as f:
            n = f.readinto(bufs[slot].numpy())
        dst.copy_(bufs[slot][:n], non_blocking=True)
        events[slot].record()


def read_shards_pageable(paths: Sequence[str], dsts: Sequence[torch.Tensor], chunk_bytes: int) -> None:
    buf = torch.empty(chunk_bytes, dtype=torch.uint8)
    for path, dst in zip(paths, dsts):
        with open(path, "rb") as f:
            n = f.readinto(buf.numpy())
        dst.copy_(buf[:n], non_blocking=True)
