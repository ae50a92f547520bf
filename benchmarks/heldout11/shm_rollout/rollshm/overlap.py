"""Receivers that load each bucket on worker threads while the control loop goes on."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from multiprocessing.shared_memory import SharedMemory

import torch

from rollshm.channel import BucketChannel, Entry


def load_entry(model: torch.nn.Module, name: str, view: torch.Tensor) -> None:
    with torch.no_grad():
        model.get_parameter(name).copy_(view)


async def receive_async_released_first(model: torch.nn.Module, shm: SharedMemory, channel: BucketChannel, pool: ThreadPoolExecutor) -> None:
    loop = asyncio.get_running_loop()
    for layout in iter(channel.await_bucket, None):
        block = torch.frombuffer(shm.buf, dtype=torch.bfloat16)
        futs = [loop.run_in_executor(pool, load_entry, model, e.name, block[e.offset // 2 : e.offset // 2 + e.numel]) for e in layout]
        channel.release_bucket()
        await asyncio.gather(*futs)


async def receive_async(model: torch.nn.Module, shm: SharedMemory, channel: BucketChannel, pool: ThreadPoolExecutor) -> None:
    loop = asyncio.get_running_loop()
    for layout in iter(channel.await_bucket, None):
        block = torch.frombuffer(shm.buf, dtype=torch.bfloat16)
        futs = [loop.run_in_executor(pool, load_entry, model, e.name, block[e.offset // 2 : e.offset // 2 + e.numel]) for e in layout]
        await asyncio.gather(*futs)
        channel.release_bucket()


def _slice(shm: SharedMemory, e: Entry) -> torch.Tensor:
    return torch.frombuffer(shm.buf, dtype=torch.bfloat16, count=e.numel, offset=e.offset)


def receive_mapped_lazy(model: torch.nn.Module, shm: SharedMemory, channel: BucketChannel, pool: ThreadPoolExecutor) -> None:
    for layout in iter(channel.await_bucket, None):
        views = [(e.name, _slice(shm, e)) for e in layout]
        done = pool.map(lambda nv: load_entry(model, *nv), views)
        channel.release_bucket()
        list(done)


def receive_mapped(model: torch.nn.Module, shm: SharedMemory, channel: BucketChannel, pool: ThreadPoolExecutor) -> None:
    for layout in iter(channel.await_bucket, None):
        views = [(e.name, _slice(shm, e)) for e in layout]
        list(pool.map(lambda nv: load_entry(model, *nv), views))
        channel.release_bucket()
