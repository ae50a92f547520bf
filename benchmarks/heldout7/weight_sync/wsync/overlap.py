"""Overlapped reloads without a gate: partial jobs, as_completed, weight_loader attributes."""

from __future__ import annotations

import asyncio
import functools
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, as_completed, wait

import torch

from wsync.stream import iter_checkpoint


def copy_rows(param: torch.Tensor, w: torch.Tensor, lo: int, hi: int) -> None:
    param.data[lo:hi].copy_(w[lo:hi])


def row_spans(n: int, parts: int) -> list[tuple[int, int]]:
    step = max(1, -(-n // parts))
    return [(lo, min(n, lo + step)) for lo in range(0, n, step)]


def reload_partial_jobs(params: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    futures = []
    for name, w in iter_checkpoint(files):
        job = functools.partial(copy_rows, params[name], w, 0, w.shape[0])
        futures.append(pool.submit(job))
    wait(futures, return_when=FIRST_EXCEPTION)


def reload_partial_waited(params: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    for name, w in iter_checkpoint(files):
        job = functools.partial(copy_rows, params[name], w, 0, w.shape[0])
        done, _ = wait([pool.submit(job)])
        for f in done:
            f.result()


def reload_row_split(params: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    for name, w in iter_checkpoint(files):
        chunk_futs = [pool.submit(copy_rows, params[name], w, lo, hi) for lo, hi in row_spans(w.shape[0], 4)]
        for f in as_completed(chunk_futs):
            f.result()


def reload_row_split_late(params: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    all_futs = []
    for name, w in iter_checkpoint(files):
        all_futs += [pool.submit(copy_rows, params[name], w, lo, hi) for lo, hi in row_spans(w.shape[0], 4)]
    for f in as_completed(all_futs):
        f.result()


class PooledLoaders:
    """weight_loader callables the engine attaches to its parameters, vLLM style."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.pending = []

    def deferred(self, param: torch.Tensor, w: torch.Tensor) -> None:
        self.pending.append(self.pool.submit(param.data.copy_, w))

    def waited(self, param: torch.Tensor, w: torch.Tensor) -> None:
        self.pool.submit(param.data.copy_, w).result()

    def drain(self) -> None:
        for f in self.pending:
            f.result()
        self.pending.clear()


def attach_loaders(model: torch.nn.Module, loaders: PooledLoaders, overlap: bool) -> None:
    for param in model.parameters():
        param.weight_loader = loaders.deferred if overlap else loaders.waited


def reload_via_attrs(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    loaders = PooledLoaders(pool)
    attach_loaders(model, loaders, overlap=True)
    params = dict(model.named_parameters())
    for name, w in iter_checkpoint(files):
        param = params[name]
        param.weight_loader(param, w)
    loaders.drain()


def reload_via_waited(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    loaders = PooledLoaders(pool)
    params = dict(model.named_parameters())
    for name, w in iter_checkpoint(files):
        param = params[name]
        loader = getattr(param, "weight_loader_sync", loaders.waited)
        loader(param, w)


async def reload_async(params: dict[str, torch.Tensor], files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    copies = []
    for name, w in iter_checkpoint(files):
        copies.append(loop.run_in_executor(None, params[name].data.copy_, w))
    await asyncio.gather(*copies)


async def reload_async_each(params: dict[str, torch.Tensor], files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    for name, w in iter_checkpoint(files):
        await asyncio.gather(loop.run_in_executor(None, params[name].data.copy_, w))
