"""Swaps optimizer shards back in: host tensor -> pinned slot -> device, overlapped."""

from __future__ import annotations

from typing import BinaryIO, Sequence

import numpy as np
import torch

from offring.ring import PinnedRing


def swap_in(ring: PinnedRing, shards: Sequence[torch.Tensor], dst: Sequence[torch.Tensor]) -> None:
    for i, (src, out) in enumerate(zip(shards, dst)):
        slot = ring.slot(i)
        n = src.numel()
        slot.host[:n].copy_(src.view(-1))
        out.view(-1).copy_(slot.host[:n], non_blocking=True)


def swap_in_fenced(ring: PinnedRing, shards: Sequence[torch.Tensor], dst: Sequence[torch.Tensor]) -> None:
    for i, (src, out) in enumerate(zip(shards, dst)):
        slot = ring.slot(i)
        n = src.numel()
        slot.read_done.synchronize()
        slot.host[:n].copy_(src.view(-1))
        out.view(-1).copy_(slot.host[:n], non_blocking=True)
        slot.read_done.record()


def swap_in_device_wait(ring: PinnedRing, shards: Sequence[torch.Tensor], dst: Sequence[torch.Tensor]) -> None:
    for i, (src, out) in enumerate(zip(shards, dst)):
        slot = ring.slot(i)
        n = src.numel()
        torch.cuda.current_stream().wait_event(slot.read_done)
        slot.host[:n].copy_(src.view(-1))
        out.view(-1).copy_(slot.host[:n], non_blocking=True)
        slot.read_done.record()


def swap_in_side_stream(ring: PinnedRing, shards: Sequence[torch.Tensor], dst: Sequence[torch.Tensor]) -> None:
    for i, (src, out) in enumerate(zip(shards, dst)):
        slot = ring.slot(i)
        n = src.numel()
        torch.cuda.current_stream().synchronize()
        slot.host[:n] = src.view(-1)
        with torch.cuda.stream(ring.copy_stream):
            out.view(-1).copy_(slot.host[:n], non_blocking=True)


def swap_in_side_stream_synced(ring: PinnedRing, shards: Sequence[torch.Tensor], dst: Sequence[torch.Tensor]) -> None:
    for i, (src, out) in enumerate(zip(shards, dst)):
        slot = ring.slot(i)
        n = src.numel()
        ring.copy_stream.synchronize()
        slot.host[:n] = src.view(-1)
        with torch.cuda.stream(ring.copy_stream):
            out.view(-1).copy_(slot.host[:n], non_blocking=True)


def swap_in_round_synced(ring: PinnedRing, shards: Sequence[torch.Tensor], dst: Sequence[torch.Tensor]) -> None:
    sync_every = len(ring)
    for i, (src, out) in enumerate(zip(shards, dst)):
        slot = ring.slot(i)
        n = src.numel()
        slot.host[:n].copy_(src.view(-1))
        out.view(-1).copy_(slot.host[:n], non_blocking=True)
        if (i + 1) % sync_every == 0:
            torch.cuda.synchronize()


def swap_in_two_rounds_synced(ring: PinnedRing, shards: Sequence[torch.Tensor], dst: Sequence[torch.Tensor]) -> None:
    sync_every = 2 * len(ring)
    for i, (src, out) in enumerate(zip(shards, dst)):
        slot = ring.slot(i)
        n = src.numel()
        slot.host[:n].copy_(src.view(-1))
        out.view(-1).copy_(slot.host[:n], non_blocking=True)
        if (i + 1) % sync_every == 0:
            torch.cuda.synchronize()


def restore_from_file(ring: PinnedRing, f: BinaryIO, dst: Sequence[torch.Tensor]) -> None:
    for i, out in enumerate(dst):
        slot = ring.slot(i)
        n = out.numel()
        f.readinto(memoryview(slot.host.numpy()[:n]))
        out.view(-1).copy_(slot.host[:n], non_blocking=True)


def restore_from_file_fenced(ring: PinnedRing, f: BinaryIO, dst: Sequence[torch.Tensor]) -> None:
    for i, out in enumerate(dst):
        slot = ring.slot(i)
        n = out.numel()
        slot.read_done.synchronize()
        f.readinto(memoryview(slot.host.numpy()[:n]))
        out.view(-1).copy_(slot.host[:n], non_blocking=True)
        slot.read_done.record()
