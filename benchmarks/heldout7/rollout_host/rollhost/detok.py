"""Detokenisation off the event loop: the host tensor goes to a worker thread."""

from __future__ import annotations

import asyncio

import torch


def detokenize(host_ids: torch.Tensor) -> list[int]:
    return host_ids.tolist()


def detokenize_after_sync(host_ids: torch.Tensor) -> list[int]:
    torch.cuda.synchronize()
    return host_ids.tolist()


async def decode_step(ids: torch.Tensor) -> list[int]:
    host_ids = ids.to("cpu", non_blocking=True)
    return await asyncio.to_thread(detokenize, host_ids)


async def decode_step_synced(ids: torch.Tensor) -> list[int]:
    host_ids = ids.to("cpu", non_blocking=True)
    return await asyncio.to_thread(detokenize_after_sync, host_ids)


async def decode_batch(groups: list[torch.Tensor]) -> list[list[int]]:
    hosts = [g.to("cpu", non_blocking=True) for g in groups]
    return list(await asyncio.gather(*(asyncio.to_thread(detokenize, h) for h in hosts)))
