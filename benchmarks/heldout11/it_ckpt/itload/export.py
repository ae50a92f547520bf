"""Exports quantised copies of a checkpoint on worker threads while it is read."""

from __future__ import annotations

import asyncio
from concurrent.futures import Future, ThreadPoolExecutor

import torch
from instanttensor import safe_open


def quantize_to(out: dict[str, torch.Tensor], name: str, t: torch.Tensor) -> None:
    scale = t.abs().amax().clamp(min=1e-8) / 127.0
    out[name] = (t / scale).round().to(torch.int8).cpu()


async def export_scheduled(files: list[str], out: dict[str, torch.Tensor]) -> None:
    tasks = []
    with safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            tasks.append(asyncio.ensure_future(asyncio.to_thread(quantize_to, out, name, t)))
        await asyncio.gather(*tasks)


async def export_awaited(files: list[str], out: dict[str, torch.Tensor]) -> None:
    with safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            await asyncio.to_thread(quantize_to, out, name, t)


def export_lagged(files: list[str], out: dict[str, torch.Tensor], pool: ThreadPoolExecutor) -> None:
    prev: Future | None = None
    with safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            if prev is not None:
                prev.result()
            prev = pool.submit(quantize_to, out, name, t)
        if prev is not None:
            prev.result()


def export_stepwise(files: list[str], out: dict[str, torch.Tensor], pool: ThreadPoolExecutor) -> None:
    with safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            fut = pool.submit(quantize_to, out, name, t)
            fut.result()
