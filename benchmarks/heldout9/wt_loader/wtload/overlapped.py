"""Loaders that overlap parameter copies with streaming, each with its own hand-off."""

import asyncio
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.pool import ThreadPool

import torch

from .overlap import CopyBatch, CopyJob, copy_param, for_each
from .source import CheckpointSource


def load_apply_async(model: torch.nn.Module, files: list[str], tp: ThreadPool) -> None:
    params = dict(model.named_parameters())
    results = []
    for name, w in CheckpointSource(files):
        results.append(tp.apply_async(copy_param, (params[name], w)))
    for r in results:
        r.get()


def load_apply_async_each(model: torch.nn.Module, files: list[str], tp: ThreadPool) -> None:
    params = dict(model.named_parameters())
    for name, w in CheckpointSource(files):
        tp.apply_async(copy_param, (params[name], w)).get()


async def load_task_group(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    async with asyncio.TaskGroup() as tg:
        for name, w in CheckpointSource(files):
            tg.create_task(asyncio.to_thread(copy_param, params[name], w))


async def load_task_group_each(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in CheckpointSource(files):
        async with asyncio.TaskGroup() as tg:
            tg.create_task(asyncio.to_thread(copy_param, params[name], w))


def load_batched(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    with CopyBatch(pool) as batch:
        for name, w in CheckpointSource(files):
            batch.copy(params[name], w)


def load_batched_each(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    for name, w in CheckpointSource(files):
        with CopyBatch(pool) as batch:
            batch.copy(params[name], w)


def load_timers(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    timers = []
    for name, w in CheckpointSource(files):
        t = threading.Timer(0.0, copy_param, args=(params[name], w))
        t.start()
        timers.append(t)
    for t in timers:
        t.join()


def load_timers_joined(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in CheckpointSource(files):
        t = threading.Timer(0.0, copy_param, args=(params[name], w))
        t.start()
        t.join()


class StreamingLoader:
    """Keeps the step's futures on self; `_settle()` waits for them."""

    def __init__(self, model: torch.nn.Module, pool: ThreadPoolExecutor) -> None:
        self.params = dict(model.named_parameters())
        self.pool = pool
        self.inflight: list[Future] = []

    def _settle(self) -> None:
        while self.inflight:
            self.inflight.pop().result()

    def load(self, files: list[str]) -> None:
        for name, w in CheckpointSource(files):
            self.inflight.append(self.pool.submit(copy_param, self.params[name], w))
            self._settle()

    def load_lazily(self, files: list[str]) -> None:
        for name, w in CheckpointSource(files):
            self.inflight.append(self.pool.submit(copy_param, self.params[name], w))
        self._settle()


def load_with_callback(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for_each(CheckpointSource(files), lambda name, w: futures.append(pool.submit(copy_param, params[name], w)))
    for f in futures:
        f.result()


def load_with_callback_waited(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    for_each(CheckpointSource(files), lambda name, w: pool.submit(copy_param, params[name], w).result())


def _drain(q: "queue.SimpleQueue[tuple[torch.nn.Parameter, torch.Tensor] | None]") -> None:
    while (item := q.get()) is not None:
        copy_param(*item)


def load_via_queue(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    q: queue.SimpleQueue = queue.SimpleQueue()
    worker = threading.Thread(target=_drain, args=(q,))
    worker.start()
    for name, w in CheckpointSource(files):
        q.put((params[name], w))
    q.put(None)
    worker.join()


def load_via_queue_cloned(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    q: queue.SimpleQueue = queue.SimpleQueue()
    worker = threading.Thread(target=_drain, args=(q,))
    worker.start()
    for name, w in CheckpointSource(files):
        q.put((params[name], w.clone()))
    q.put(None)
    worker.join()


def load_jobs(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    jobs = [CopyJob(name, params[name], w) for name, w in CheckpointSource(files)]
    for job in jobs:
        job.launch(pool).result()


def load_jobs_stepwise(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    launched = []
    for name, w in CheckpointSource(files):
        launched.append(CopyJob(name, params[name], w).launch(pool))
    for fut in launched:
        fut.result()


def load_jobs_owned(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    for name, w in CheckpointSource(files):
        CopyJob(name, params[name], w).launch(pool).result()


def load_jobs_cloned(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    jobs = [CopyJob(name, params[name], w.clone()) for name, w in CheckpointSource(files)]
    for job in jobs:
        job.launch(pool)
    for job in jobs:
        for fut in job.futures:
            fut.result()
