"""Disk -> pinned slab -> GPU: bring spilled blocks back."""

from __future__ import annotations

import os

import numpy as np
import torch

from kvtier.slab import PinnedSlab


def restore_ring(fd: int, offsets: list[int], gpu_blocks: list[torch.Tensor], slab: PinnedSlab) -> None:
    for i, (off, dst) in enumerate(zip(offsets, gpu_blocks)):
        slot = slab.slots[i % slab.n_slots]
        os.preadv(fd, [slot.numpy()], off)
        dst.copy_(slot.view(dst.shape), non_blocking=True)


def restore_ring_fenced(fd: int, offsets: list[int], gpu_blocks: list[torch.Tensor], slab: PinnedSlab) -> None:
    for i, (off, dst) in enumerate(zip(offsets, gpu_blocks)):
        k = i % slab.n_slots
        slab.landed[k].synchronize()
        os.preadv(fd, [slab.slots[k].numpy()], off)
        dst.copy_(slab.slots[k].view(dst.shape), non_blocking=True)
        slab.landed[k].record()


def restore_pairs(host_blocks: list[torch.Tensor], gpu_blocks: list[torch.Tensor], block_numel: int) -> None:
    pair = [torch.empty(block_numel, dtype=torch.float16, pin_memory=True) for _ in range(2)]
    for i, (src, dst) in enumerate(zip(host_blocks, gpu_blocks)):
        buf = pair[i % 2]
        buf.copy_(src.flatten())
        dst.copy_(buf.view(dst.shape), non_blocking=True)
        if i % 2 == 1:
            torch.cuda.synchronize()


def restore_ragged(pieces: list[torch.Tensor], dst_rows: list[torch.Tensor], max_rows: int, width: int) -> None:
    staging = torch.empty((max_rows, width), dtype=torch.float16, pin_memory=True)
    copied = torch.cuda.Event()
    for piece, dst in zip(pieces, dst_rows):
        torch.cuda.current_stream().wait_event(copied)
        staging[: piece.shape[0]] = piece
        dst.copy_(staging[: piece.shape[0]], non_blocking=True)
        copied.record()


def restore_maybe_pinned(pieces: list[np.ndarray], dst_blocks: list[torch.Tensor], block_numel: int) -> None:
    staging = torch.empty(block_numel, dtype=torch.float16, pin_memory=torch.cuda.is_available())
    for piece, dst in zip(pieces, dst_blocks):
        np.copyto(staging.numpy(), piece)
        dst.copy_(staging.view(dst.shape), non_blocking=True)


def restore_pageable(pieces: list[np.ndarray], dst_blocks: list[torch.Tensor], block_numel: int) -> None:
    staging = torch.empty(block_numel, dtype=torch.float16, pin_memory=False)
    for piece, dst in zip(pieces, dst_blocks):
        np.copyto(staging.numpy(), piece)
        dst.copy_(staging.view(dst.shape), non_blocking=True)


class BlockUploader:
    """One pinned staging block reused by every upload() of a request's prefix."""

    def __init__(self, block_numel: int) -> None:
        self.staging = torch.empty(block_numel, dtype=torch.float16, pin_memory=True)

    def upload(self, host_block: np.ndarray, dst: torch.Tensor) -> None:
        np.copyto(self.staging.numpy(), host_block)
        dst.copy_(self.staging.view(dst.shape), non_blocking=True)


class FencedUploader:
    def __init__(self, block_numel: int) -> None:
        self.staging = torch.empty(block_numel, dtype=torch.float16, pin_memory=True)
        self.done = torch.cuda.Event()

    def upload(self, host_block: np.ndarray, dst: torch.Tensor) -> None:
        self.done.synchronize()
        np.copyto(self.staging.numpy(), host_block)
        dst.copy_(self.staging.view(dst.shape), non_blocking=True)
        self.done.record()


def restore_prefix(uploader: BlockUploader, blocks: list[np.ndarray], dst_blocks: list[torch.Tensor]) -> None:
    for block, dst in zip(blocks, dst_blocks):
        uploader.upload(block, dst)


def restore_prefix_fenced(uploader: FencedUploader, blocks: list[np.ndarray], dst_blocks: list[torch.Tensor]) -> None:
    for block, dst in zip(blocks, dst_blocks):
        uploader.upload(block, dst)


def make_uploaders(block_numel: int) -> tuple[BlockUploader, FencedUploader]:
    return BlockUploader(block_numel), FencedUploader(block_numel)
