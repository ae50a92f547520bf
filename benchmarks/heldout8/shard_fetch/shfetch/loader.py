"""Loaders: each streams the checkpoint and copies every tensor into its parameter."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import Executor, Future, ThreadPoolExecutor, wait

import torch

from shfetch.copying import copy_param, copy_param_async, copy_row, place, timed
from shfetch.gates import (
    HostOverlapMixin,
    OverlapPolicies,
    SizeOverlapMixin,
    by_ownership,
    overlap_ok,
    overlap_ok_attrs,
    overlap_ok_fork,
    overlap_ok_storage,
)
from shfetch.naming import model_weights
from shfetch.sinks import TensorSink


class PooledLoaderBase:
    """Copies what `can_overlap` approves on the pool, the rest inline."""

    def __init__(self, model: torch.nn.Module, pool: ThreadPoolExecutor) -> None:
        self.params = dict(model.named_parameters())
        self.pool = pool

    def can_overlap(self, w: torch.Tensor) -> bool:
        return False

    def load(self, files: list[str], mapping: dict[str, str]) -> None:
        futures: list[Future[None]] = []
        for name, w in model_weights(files, mapping):
            if self.can_overlap(w):
                futures.append(self.pool.submit(copy_param, self.params[name], w))
            else:
                copy_param(self.params[name], w)
        wait(futures)


class ShardLoader(HostOverlapMixin, PooledLoaderBase):
    """The production loader."""


class QuickShardLoader(SizeOverlapMixin, PooledLoaderBase):
    """The quick-start loader (examples/serve_quick.py)."""


@timed("load_gated")
def load_gated(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    futures: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        if overlap_ok(w):
            futures.append(pool.submit(copy_param, params[name], w))
            continue
        copy_param(params[name], w)
    wait(futures)


@timed("load_gated_fork")
def load_gated_fork(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    futures: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        if overlap_ok_fork(w):
            futures.append(pool.submit(copy_param, params[name], w))
            continue
        copy_param(params[name], w)
    wait(futures)


def load_gated_storage(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    futures: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        if not overlap_ok_storage(w):
            copy_param(params[name], w)
            continue
        futures.append(pool.submit(copy_param, params[name], w))
    wait(futures)


def load_gated_attrs(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    futures: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        if not overlap_ok_attrs(w):
            copy_param(params[name], w)
            continue
        futures.append(pool.submit(copy_param, params[name], w))
    wait(futures)


def load_owned_policy(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    gate = OverlapPolicies.get("owned")
    futures: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        if gate(w):
            futures.append(pool.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    wait(futures)


def load_bytes_policy(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    gate = OverlapPolicies.get("bytes")
    futures: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        if gate(w):
            futures.append(pool.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    wait(futures)


def load_verdict_first(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    futures: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        deferrable = by_ownership(w)
        if not deferrable:
            copy_param(params[name], w)
            continue
        futures.append(pool.submit(copy_param, params[name], w))
    wait(futures)


@timed("load_threaded")
def load_threaded(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str]) -> None:
    workers: list[threading.Thread] = []
    for name, w in model_weights(files, mapping):
        worker = threading.Thread(target=copy_param, args=(params[name], w), name=f"copy-{name}")
        worker.start()
        workers.append(worker)
    for worker in workers:
        worker.join()


@timed("load_threaded_joined")
def load_threaded_joined(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str]) -> None:
    for name, w in model_weights(files, mapping):
        worker = threading.Thread(target=copy_param, args=(params[name], w), name=f"copy-{name}")
        worker.start()
        worker.join(timeout=None)


def load_rowwise(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    pending = []
    for name, w in model_weights(files, mapping):
        dst = params[name].data
        if w.dim() < 2:
            dst.copy_(w)
            continue
        pending.append(pool.map(copy_row, dst.unbind(0), w.unbind(0)))
    for results in pending:
        list(results)


def load_rowwise_drained(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    for name, w in model_weights(files, mapping):
        dst = params[name].data
        if w.dim() < 2:
            dst.copy_(w)
            continue
        list(pool.map(copy_row, dst.unbind(0), w.unbind(0)))


def drive(sink: TensorSink, files: list[str], mapping: dict[str, str]) -> None:
    for name, w in model_weights(files, mapping):
        sink.consume(name, w)
    sink.flush()


def drive_owned(sink: TensorSink, files: list[str], mapping: dict[str, str]) -> None:
    for name, w in model_weights(files, mapping):
        sink.consume(name, w.clone())
    sink.flush()


def drive_stepwise(sink: TensorSink, files: list[str], mapping: dict[str, str]) -> None:
    for name, w in model_weights(files, mapping):
        sink.consume(name, w)
        sink.flush()


def load_on_loop(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], loop: asyncio.AbstractEventLoop) -> None:
    """Parameters belong to the serving loop's thread: every copy is made there."""
    for name, w in model_weights(files, mapping):
        loop.call_soon_threadsafe(copy_param, params[name], w)


def load_on_loop_waited(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], loop: asyncio.AbstractEventLoop) -> None:
    for name, w in model_weights(files, mapping):
        asyncio.run_coroutine_threadsafe(copy_param_async(params[name], w), loop).result()


def load_dispatched(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    placed: list[Future[None]] = []
    for name, w in model_weights(files, mapping):
        placed.append(place(params[name], w, pool))
    wait(placed)


def load_dispatched_waited(params: dict[str, torch.nn.Parameter], files: list[str], mapping: dict[str, str], pool: Executor) -> None:
    for name, w in model_weights(files, mapping):
        place(params[name], w, pool).result()
