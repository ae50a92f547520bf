"""Unguarded draft loaders: every tensor goes to a worker, each loader waits its own way."""

from __future__ import annotations

import asyncio
import functools
import queue
import threading
from concurrent.futures import FIRST_EXCEPTION, Future, ThreadPoolExecutor, wait
from typing import Generator

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from specdraft.pool import chain, copy_into, log_done


async def load_async_gathered(draft: torch.nn.Module, files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    params = dict(draft.named_parameters())
    pending = []
    for name, w in runai_safetensors_weights_iterator(files):
        pending.append(loop.run_in_executor(None, functools.partial(copy_into, params[name], w)))
    await asyncio.gather(*pending)


async def load_async_awaited(draft: torch.nn.Module, files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    params = dict(draft.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        await loop.run_in_executor(None, functools.partial(copy_into, params[name], w))


def load_chained_late(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    chained: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        fut = pool.submit(copy_into, params[name], w)
        fut.add_done_callback(log_done)
        chained.append(chain(fut))
    for c in chained:
        c.result()


def load_chained_each(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        fut = pool.submit(copy_into, params[name], w)
        fut.add_done_callback(log_done)
        chain(fut).result()


def load_first_exception_late(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    futures = []
    for name, w in runai_safetensors_weights_iterator(files):
        futures.append(pool.submit(copy_into, params[name], w))
    done, _ = wait(futures, return_when=FIRST_EXCEPTION)
    for f in done:
        f.result()


def load_first_exception_each(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        fut = pool.submit(copy_into, params[name], w)
        done, _ = wait([fut], return_when=FIRST_EXCEPTION)
        for f in done:
            f.result()


def inline_copier(params: dict[str, torch.nn.Parameter]) -> Generator[None, tuple[str, torch.Tensor], None]:
    """A coroutine-style consumer: send((name, w)) copies w before send returns."""
    while True:
        name, w = yield
        copy_into(params[name], w)


def pooled_copier(
    params: dict[str, torch.nn.Parameter], pool: ThreadPoolExecutor
) -> Generator[None, tuple[str, torch.Tensor], None]:
    """A coroutine-style consumer that hands each copy to the pool and waits for all on close."""
    futures: list[Future] = []
    try:
        while True:
            name, w = yield
            futures.append(pool.submit(copy_into, params[name], w))
    finally:
        wait(futures)


def load_via_generator(draft: torch.nn.Module, files: list[str]) -> None:
    sink = inline_copier(dict(draft.named_parameters()))
    next(sink)
    for name, w in runai_safetensors_weights_iterator(files):
        sink.send((name, w))
    sink.close()


def load_via_pooled_generator(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    sink = pooled_copier(dict(draft.named_parameters()), pool)
    next(sink)
    for name, w in runai_safetensors_weights_iterator(files):
        sink.send((name, w))
    sink.close()


class CopyWorker:
    """One thread copying (param, weight) jobs off a queue; `copied` counts finished jobs."""

    def __init__(self) -> None:
        self.jobs: queue.Queue = queue.Queue()
        self.cond = threading.Condition()
        self.copied = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            param, weight = self.jobs.get()
            copy_into(param, weight)
            with self.cond:
                self.copied += 1
                self.cond.notify_all()


def load_worker_counted_late(draft: torch.nn.Module, files: list[str], worker: CopyWorker) -> None:
    params = dict(draft.named_parameters())
    sent = worker.copied
    for name, w in runai_safetensors_weights_iterator(files):
        worker.jobs.put((params[name], w))
        sent += 1
    with worker.cond:
        worker.cond.wait_for(lambda: worker.copied >= sent)


def load_worker_counted_each(draft: torch.nn.Module, files: list[str], worker: CopyWorker) -> None:
    params = dict(draft.named_parameters())
    sent = worker.copied
    for name, w in runai_safetensors_weights_iterator(files):
        worker.jobs.put((params[name], w))
        sent += 1
        with worker.cond:
            worker.cond.wait_for(lambda: worker.copied >= sent)
