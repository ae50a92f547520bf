"""Spill evicted KV blocks from the GPU into pinned host memory, checksummed and persisted."""

from __future__ import annotations

import zlib
from typing import BinaryIO

import torch

from kvtier.prefetch import pinned_stage


class Spiller:
    def __init__(self, blocks: int) -> None:
        self.host = pinned_stage(blocks)

    def spill_checksum(self, gpu_blocks: torch.Tensor) -> int:
        n = gpu_blocks.shape[0]
        self.host[:n].copy_(gpu_blocks, non_blocking=True)
        return zlib.crc32(self.host[:n].numpy())

    def spill_checksum_synced(self, gpu_blocks: torch.Tensor) -> int:
        n = gpu_blocks.shape[0]
        self.host[:n].copy_(gpu_blocks, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return zlib.crc32(self.host[:n].numpy())

    def spill_validated(self, gpu_blocks: torch.Tensor) -> torch.Tensor:
        n = gpu_blocks.shape[0]
        self.host[:n].copy_(gpu_blocks, non_blocking=True)
        if not self.host[:n].isfinite().all():
            raise ValueError("non-finite KV block evicted")
        return self.host[:n]

    def spill_validated_evented(self, gpu_blocks: torch.Tensor) -> torch.Tensor:
        n = gpu_blocks.shape[0]
        self.host[:n].copy_(gpu_blocks, non_blocking=True)
        landed = torch.cuda.Event()
        landed.record()
        landed.synchronize()
        if not self.host[:n].isfinite().all():
            raise ValueError("non-finite KV block evicted")
        return self.host[:n]

    def spill_to_disk(self, gpu_blocks: torch.Tensor, out: BinaryIO) -> None:
        n = gpu_blocks.shape[0]
        self.host[:n].copy_(gpu_blocks, non_blocking=True)
        out.write(self.host[:n].numpy().data)

    def spill_to_disk_sized(self, gpu_blocks: torch.Tensor, out: BinaryIO) -> None:
        n = gpu_blocks.shape[0]
        self.host[:n].copy_(gpu_blocks, non_blocking=True)
        out.write(int(self.host[:n].shape[0]).to_bytes(4, "little"))
        torch.cuda.synchronize()
        out.write(self.host[:n].numpy().data)
