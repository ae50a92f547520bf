"""Spills evicted device KV blocks to host memory and fingerprints them for dedup."""

from __future__ import annotations

import logging
from typing import BinaryIO

import numpy as np
import torch

log = logging.getLogger(__name__)


class Spiller:
    def __init__(self, block_shape: tuple[int, ...], dtype: torch.dtype = torch.float16) -> None:
        self.host = torch.empty(block_shape, dtype=dtype, pin_memory=True)

    def distinct_values_unsynced(self, gpu_block: torch.Tensor) -> int:
        self.host.copy_(gpu_block, non_blocking=True)
        return int(np.unique(self.host.numpy()).size)

    def distinct_values_synced(self, gpu_block: torch.Tensor) -> int:
        self.host.copy_(gpu_block, non_blocking=True)
        done = torch.cuda.Event()
        done.record()
        done.synchronize()
        return int(np.unique(self.host.numpy()).size)

    def write_unsynced(self, gpu_block: torch.Tensor, out: BinaryIO) -> None:
        self.host.copy_(gpu_block, non_blocking=True)
        self.host.numpy().tofile(out)

    def write_synced(self, gpu_block: torch.Tensor, out: BinaryIO) -> None:
        self.host.copy_(gpu_block, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        self.host.numpy().tofile(out)


def nonzero_count_async(gpu_block: torch.Tensor) -> int:
    host = torch.empty(gpu_block.shape, dtype=gpu_block.dtype, pin_memory=True)
    host.copy_(gpu_block, non_blocking=True)
    return torch.count_nonzero(host).item()


def nonzero_count_blocking(gpu_block: torch.Tensor) -> int:
    host = torch.empty(gpu_block.shape, dtype=gpu_block.dtype, pin_memory=True)
    host.copy_(gpu_block, non_blocking=False)
    return torch.count_nonzero(host).item()
