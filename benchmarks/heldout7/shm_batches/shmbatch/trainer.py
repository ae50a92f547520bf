"""The training loop's consumption of the ring, in the variants the project has used."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from shmbatch.batch import Batch
from shmbatch.ring import SlotRing


def pack(tokens: np.ndarray) -> torch.Tensor:
    return torch.tensor(tokens, dtype=torch.long)


def count_pad(part: np.ndarray) -> int:
    return int((part == 0).sum())


class Consumer:
    def __init__(self, ring: SlotRing, steps: int) -> None:
        self.ring = ring
        self.steps = steps
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.history: list[Batch] = []
        self.prefetched: torch.Tensor | None = None
        self.packed: list[torch.Tensor] = []

    def run_replay(self) -> None:
        for step in range(self.steps):
            slot, n = self.ring.next_ready()
            tokens = self.ring.tokens(slot, n)
            self.history.append(Batch(step, tokens))
            self.ring.release(slot)

    def run_replay_copied(self) -> None:
        for step in range(self.steps):
            slot, n = self.ring.next_ready()
            tokens = self.ring.tokens(slot, n)
            self.history.append(Batch(step, tokens.copy()))
            self.ring.release(slot)

    def run_prefetch(self) -> None:
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            self.prefetched = torch.from_numpy(self.ring.tokens(slot, n))
            self.ring.release(slot)

    def run_prefetch_copied(self) -> None:
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            self.prefetched = torch.tensor(self.ring.tokens(slot, n))
            self.ring.release(slot)

    def run_pooled(self) -> None:
        futures = []
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            futures.append(self.pool.submit(pack, self.ring.tokens(slot, n)))
            self.ring.release(slot)
        self.packed = [f.result() for f in futures]

    def run_pooled_waited(self) -> None:
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            fut = self.pool.submit(pack, self.ring.tokens(slot, n))
            self.packed.append(fut.result())
            self.ring.release(slot)

    def run_threaded(self) -> None:
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            tokens = self.ring.tokens(slot, n)
            th = threading.Thread(target=self._pack_into, args=(tokens,))
            th.start()
            self.ring.release(slot)
            th.join()

    def run_threaded_joined(self) -> None:
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            tokens = self.ring.tokens(slot, n)
            th = threading.Thread(target=self._pack_into, args=(tokens,))
            th.start()
            th.join()
            self.ring.release(slot)

    def _pack_into(self, tokens: np.ndarray) -> None:
        self.packed.append(pack(tokens))

    async def pad_stats(self) -> list[int]:
        loop = asyncio.get_running_loop()
        out: list[int] = []
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            tokens = self.ring.tokens(slot, n)
            parts = [loop.run_in_executor(self.pool, count_pad, p) for p in np.array_split(tokens, 4)]
            self.ring.release(slot)
            out.extend(await asyncio.gather(*parts))
        return out

    async def pad_stats_gathered(self) -> list[int]:
        loop = asyncio.get_running_loop()
        out: list[int] = []
        for _ in range(self.steps):
            slot, n = self.ring.next_ready()
            tokens = self.ring.tokens(slot, n)
            out.extend(await asyncio.gather(*[loop.run_in_executor(self.pool, count_pad, p) for p in np.array_split(tokens, 4)]))
            self.ring.release(slot)
        return out
