"""Bringing spilled blocks back: from a list of host chunks, or from the spill file."""

from __future__ import annotations

import collections
import os

import torch


def upload_chunks(chunks: list[torch.Tensor], dst: torch.Tensor) -> None:
    """dst[i] <- chunks[i] through two pinned slots, at most two uploads in flight."""
    slots = torch.empty((2, dst.shape[1]), dtype=dst.dtype, pin_memory=True)
    pending: collections.deque[torch.cuda.Event] = collections.deque()
    for i, chunk in enumerate(chunks):
        if len(pending) >= 2:
            pending.popleft().synchronize()
        slots[i % 2].copy_(chunk)
        dst[i].copy_(slots[i % 2], non_blocking=True)
        uploaded = torch.cuda.Event()
        uploaded.record()
        pending.append(uploaded)
    while pending:
        pending.popleft().synchronize()


def upload_chunks_deep(chunks: list[torch.Tensor], dst: torch.Tensor) -> None:
    """As upload_chunks, with a deeper queue of events (three) over the same two slots."""
    slots = torch.empty((2, dst.shape[1]), dtype=dst.dtype, pin_memory=True)
    pending: collections.deque[torch.cuda.Event] = collections.deque()
    for i, chunk in enumerate(chunks):
        if len(pending) >= 3:
            pending.popleft().synchronize()
        slots[i % 2].copy_(chunk)
        dst[i].copy_(slots[i % 2], non_blocking=True)
        uploaded = torch.cuda.Event()
        uploaded.record()
        pending.append(uploaded)
    while pending:
        pending.popleft().synchronize()


def restore_from_file(fd: int, blocks: list[torch.Tensor], block_bytes: int) -> None:
    stage = torch.empty(block_bytes, dtype=torch.uint8, pin_memory=True)
    view = stage.numpy()
    for i, block in enumerate(blocks):
        os.preadv(fd, [view], i * block_bytes)
        block.view(torch.uint8).copy_(stage, non_blocking=True)


def restore_from_file_synced(fd: int, blocks: list[torch.Tensor], block_bytes: int) -> None:
    stage = torch.empty(block_bytes, dtype=torch.uint8, pin_memory=True)
    view = stage.numpy()
    for i, block in enumerate(blocks):
        torch.cuda.current_stream().synchronize()
        os.preadv(fd, [view], i * block_bytes)
        block.view(torch.uint8).copy_(stage, non_blocking=True)
    torch.cuda.current_stream().synchronize()
