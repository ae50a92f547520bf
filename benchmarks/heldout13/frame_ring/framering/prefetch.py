"""Consumers of the ring: preprocessing for the vision encoder."""

from __future__ import annotations

import asyncio
import bisect
import contextlib
import functools
import multiprocessing.pool
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import torch

from framering.ring import SlotRing


def normalise(frame: np.ndarray, mean: float = 127.5) -> np.ndarray:
    return (frame.astype(np.float32) - mean) / mean


def resize_nearest(frame: np.ndarray, size: int) -> np.ndarray:
    h, w, _ = frame.shape
    rows = np.arange(size) * h // size
    cols = np.arange(size) * w // size
    return frame[rows][:, cols]


async def prefetch_released_first(ring: SlotRing, n: int, size: int) -> list[np.ndarray]:
    loop = asyncio.get_running_loop()
    out = []
    for _ in range(n):
        slot, _ts = ring.acquire()
        img = ring.frame(slot)
        fut = loop.run_in_executor(None, functools.partial(resize_nearest, img, size))
        ring.release_slot(slot)
        out.append(await fut)
    return out


async def prefetch_awaited(ring: SlotRing, n: int, size: int) -> list[np.ndarray]:
    loop = asyncio.get_running_loop()
    out = []
    for _ in range(n):
        slot, _ts = ring.acquire()
        img = ring.frame(slot)
        fut = loop.run_in_executor(None, functools.partial(resize_nearest, img, size))
        out.append(await fut)
        ring.release_slot(slot)
    return out


def normalise_batch_late(ring: SlotRing, n: int, procs: multiprocessing.pool.Pool) -> list[np.ndarray]:
    results = []
    for _ in range(n):
        slot, _ts = ring.acquire()
        img = ring.frame(slot)
        res = procs.apply_async(normalise, (img,))
        ring.release_slot(slot)
        results.append(res.get())
    return results


def normalise_batch(ring: SlotRing, n: int, procs: multiprocessing.pool.Pool) -> list[np.ndarray]:
    results = []
    for _ in range(n):
        slot, _ts = ring.acquire()
        img = ring.frame(slot)
        res = procs.apply_async(normalise, (img,))
        results.append(res.get())
        ring.release_slot(slot)
    return results


class ExitStackPrefetcher:
    def __init__(self, ring: SlotRing, pool: ThreadPoolExecutor) -> None:
        self.ring = ring
        self.pool = pool

    def step_released_inside(self, size: int) -> np.ndarray:
        with contextlib.ExitStack() as stack:
            slot, _ts = self.ring.acquire()
            img = self.ring.frame(slot)
            fut: Future = self.pool.submit(resize_nearest, img, size)
            stack.callback(fut.result)
            self.ring.release_slot(slot)
        return fut.result()

    def step(self, size: int) -> np.ndarray:
        with contextlib.ExitStack() as stack:
            slot, _ts = self.ring.acquire()
            img = self.ring.frame(slot)
            fut: Future = self.pool.submit(resize_nearest, img, size)
            stack.callback(fut.result)
        self.ring.release_slot(slot)
        return fut.result()


class TimelineIndex:
    """Frames ordered by timestamp, for temporal sampling of a clip."""

    def __init__(self) -> None:
        self.by_ts: list[tuple[float, int, np.ndarray]] = []

    def ingest(self, ring: SlotRing, n: int) -> None:
        for i in range(n):
            slot, ts = ring.acquire()
            bisect.insort(self.by_ts, (ts, i, ring.frame(slot)))
            ring.release_slot(slot)

    def ingest_owned(self, ring: SlotRing, n: int) -> None:
        for i in range(n):
            slot, ts = ring.acquire()
            bisect.insort(self.by_ts, (ts, i, ring.frame(slot).copy()))
            ring.release_slot(slot)


def to_chw_batch(ring: SlotRing, n: int) -> torch.Tensor:
    batch = []
    for _ in range(n):
        slot, _ts = ring.acquire()
        batch.append(torch.from_numpy(ring.frame(slot)).permute(2, 0, 1))
        ring.release_slot(slot)
    return torch.stack(batch)


def to_chw_batch_float(ring: SlotRing, n: int) -> torch.Tensor:
    batch = []
    for _ in range(n):
        slot, _ts = ring.acquire()
        batch.append(torch.from_numpy(ring.frame(slot)).permute(2, 0, 1).float())
        ring.release_slot(slot)
    return torch.stack(batch)


_RING: SlotRing | None = None


def attach(ring: SlotRing) -> None:
    global _RING
    _RING = ring


@functools.lru_cache(maxsize=64)
def poster_frame(clip_id: str) -> np.ndarray:
    assert _RING is not None
    slot, _ts = _RING.acquire()
    thumb = _RING.frame(slot)[::8, ::8]
    _RING.release_slot(slot)
    return thumb


@functools.lru_cache(maxsize=64)
def poster_frame_owned(clip_id: str) -> np.ndarray:
    assert _RING is not None
    slot, _ts = _RING.acquire()
    thumb = _RING.frame(slot)[::8, ::8].copy()
    _RING.release_slot(slot)
    return thumb
