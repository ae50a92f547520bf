"""Unguarded hand-offs of streamed adapter weights (async loaders, thread pools, executors).

Adapters are published in float16 (magnitude vectors in float32), so `.numpy()` works on them.
"""

from __future__ import annotations

import asyncio
import logging
import threading
from concurrent.futures import ThreadPoolExecutor, as_completed
from multiprocessing.pool import ThreadPool

import numpy as np
import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from loraswap.executors import DeferredExecutor, InlineExecutor
from loraswap.swap import load_into

log = logging.getLogger(__name__)


def _load_pair(pair: tuple[torch.Tensor, torch.Tensor]) -> None:
    load_into(*pair)


def _load_numpy(param: torch.Tensor, arr: np.ndarray) -> None:
    load_into(param, torch.from_numpy(arr))


def _load_then_meet(param: torch.Tensor, w: torch.Tensor, barrier: threading.Barrier) -> None:
    load_into(param, w)
    barrier.wait()


async def _write(param: torch.Tensor, w: torch.Tensor) -> None:
    load_into(param, w)


async def swap_tasks_gathered(params: dict[str, torch.Tensor], files: list[str]) -> None:
    tasks = []
    for name, w in runai_safetensors_weights_iterator(files):
        tasks.append(asyncio.create_task(_write(params[name], w)))
    await asyncio.gather(*tasks)


async def swap_tasks_awaited(params: dict[str, torch.Tensor], files: list[str]) -> None:
    for name, w in runai_safetensors_weights_iterator(files):
        await asyncio.create_task(_write(params[name], w))


async def swap_call_later(params: dict[str, torch.Tensor], files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    for name, w in runai_safetensors_weights_iterator(files):
        loop.call_later(0, load_into, params[name], w)
    await asyncio.sleep(0.01)


async def swap_call_soon_yield(params: dict[str, torch.Tensor], files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    for name, w in runai_safetensors_weights_iterator(files):
        loop.call_soon(load_into, params[name], w)
        await asyncio.sleep(0)


def swap_map_async_peek(params: dict[str, torch.Tensor], files: list[str]) -> None:
    with ThreadPool(4) as tp:
        for name, w in runai_safetensors_weights_iterator(files):
            res = tp.map_async(_load_pair, [(params[name], w)])
            if not res.ready():
                log.debug("copy of %s still running", name)
        tp.close()
        tp.join()


def swap_map_async_wait(params: dict[str, torch.Tensor], files: list[str]) -> None:
    with ThreadPool(4) as tp:
        for name, w in runai_safetensors_weights_iterator(files):
            res = tp.map_async(_load_pair, [(params[name], w)])
            res.wait()


def swap_as_completed_after(params: dict[str, torch.Tensor], files: list[str]) -> None:
    with ThreadPoolExecutor(4) as pool:
        futs = {pool.submit(load_into, params[name], w): name for name, w in runai_safetensors_weights_iterator(files)}
        for fut in as_completed(futs):
            fut.result()


def swap_as_completed_each(params: dict[str, torch.Tensor], files: list[str]) -> None:
    with ThreadPoolExecutor(4) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            fut = pool.submit(load_into, params[name], w)
            for done in as_completed([fut]):
                done.result()


class ThreadedSwapper:
    def __init__(self, params: dict[str, torch.Tensor]) -> None:
        self.params = params
        self._threads: list[threading.Thread] = []

    def swap_detached(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            t = threading.Thread(target=load_into, args=(self.params[name], w), daemon=True)
            t.start()
            self._threads.append(t)

    def close(self) -> None:
        for t in self._threads:
            t.join()

    def swap_barrier(self, files: list[str]) -> None:
        barrier = threading.Barrier(2)
        for name, w in runai_safetensors_weights_iterator(files):
            threading.Thread(target=_load_then_meet, args=(self.params[name], w, barrier)).start()
            barrier.wait()

    def swap_numpy_view(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            t = threading.Thread(target=_load_numpy, args=(self.params[name], w.numpy()))
            t.start()
            self._threads.append(t)

    def swap_numpy_copy(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            t = threading.Thread(target=_load_numpy, args=(self.params[name], w.numpy().copy()))
            t.start()
            self._threads.append(t)


def swap_deferred(params: dict[str, torch.Tensor], files: list[str]) -> None:
    ex = DeferredExecutor()
    for name, w in runai_safetensors_weights_iterator(files):
        ex.submit(load_into, params[name], w)
    ex.flush()


def swap_inline(params: dict[str, torch.Tensor], files: list[str]) -> None:
    ex = InlineExecutor()
    for name, w in runai_safetensors_weights_iterator(files):
        ex.submit(load_into, params[name], w)
