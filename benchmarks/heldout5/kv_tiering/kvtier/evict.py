"""GPU -> pinned slab -> disk: spill cold blocks."""

from __future__ import annotations

import hashlib
import queue
import threading
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import BinaryIO

import torch

from kvtier.slab import PinnedSlab


def block_digests(gpu_blocks: list[torch.Tensor], slab: PinnedSlab) -> list[str]:
    for slot, blk in zip(slab.slots, gpu_blocks):
        slot.copy_(blk.flatten(), non_blocking=True)
    return [hashlib.blake2b(s.numpy().tobytes()).hexdigest() for s in slab.slots]


def block_digests_synced(gpu_blocks: list[torch.Tensor], slab: PinnedSlab) -> list[str]:
    for slot, blk in zip(slab.slots, gpu_blocks):
        slot.copy_(blk.flatten(), non_blocking=True)
    torch.cuda.current_stream().synchronize()
    return [hashlib.blake2b(s.numpy().tobytes()).hexdigest() for s in slab.slots]


def has_nonfinite(gpu_block: torch.Tensor, slab: PinnedSlab) -> bool:
    slot = slab.slots[0]
    slot.copy_(gpu_block.flatten(), non_blocking=True)
    if not torch.isfinite(slot).all():
        return True
    return False


def spill_one_checked(gpu_block: torch.Tensor, slab: PinnedSlab, out: BinaryIO) -> None:
    slot = slab.slots[0]
    ready = slab.landed[0]
    ready.record()
    slot.copy_(gpu_block.flatten(), non_blocking=True)
    ready.synchronize()
    out.write(slot.numpy().tobytes())


def spill_one_polled(gpu_block: torch.Tensor, slab: PinnedSlab, out: BinaryIO) -> None:
    slot = slab.slots[0]
    ready = slab.landed[0]
    slot.copy_(gpu_block.flatten(), non_blocking=True)
    ready.record()
    while not ready.query():
        time.sleep(0)
    out.write(slot.numpy().tobytes())


class Spiller:
    """A writer thread drains (key, slot, event) items to a file."""

    def __init__(self, slab: PinnedSlab, out: BinaryIO) -> None:
        self.slab = slab
        self.out = out
        self.items: queue.Queue = queue.Queue()
        self.thread = threading.Thread(target=self._drain, daemon=True)
        self.thread.start()

    def _drain(self) -> None:
        while (item := self.items.get()) is not None:
            key, slot, ev = item
            if ev is not None:
                ev.synchronize()
            self.out.write(key.encode() + slot.numpy().tobytes())

    def spill(self, key: str, gpu_block: torch.Tensor, k: int) -> None:
        slot = self.slab.slots[k]
        slot.copy_(gpu_block.flatten(), non_blocking=True)
        self.items.put((key, slot, None))

    def spill_fenced(self, key: str, gpu_block: torch.Tensor, k: int) -> None:
        slot = self.slab.slots[k]
        slot.copy_(gpu_block.flatten(), non_blocking=True)
        ev = self.slab.landed[k]
        ev.record()
        self.items.put((key, slot, ev))


def _persist(out: BinaryIO, slot: torch.Tensor) -> int:
    return out.write(slot.numpy().tobytes())


def _persist_after_sync(out: BinaryIO, slot: torch.Tensor) -> int:
    torch.cuda.synchronize()
    return out.write(slot.numpy().tobytes())


def spill_async(pool: ThreadPoolExecutor, out: BinaryIO, gpu_block: torch.Tensor, slab: PinnedSlab) -> Future:
    slot = slab.slots[1]
    slot.copy_(gpu_block.flatten(), non_blocking=True)
    return pool.submit(_persist, out, slot)


def spill_async_synced(pool: ThreadPoolExecutor, out: BinaryIO, gpu_block: torch.Tensor, slab: PinnedSlab) -> Future:
    slot = slab.slots[1]
    slot.copy_(gpu_block.flatten(), non_blocking=True)
    return pool.submit(_persist_after_sync, out, slot)
