"""Unguarded overlap paths: every streamed weight goes to another thread."""

from __future__ import annotations

import functools
import queue
import threading
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from wsync.pool import copy_param


def copy_and_signal(param: torch.nn.Parameter, w: torch.Tensor, done: threading.Event) -> None:
    try:
        copy_param(param, w)
    finally:
        done.set()


def sync_partial_late(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        futs.append(pool.submit(functools.partial(copy_param, params[name], w)))
    wait(futs)


def sync_partial_now(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        pool.submit(functools.partial(copy_param, params[name], w)).result()


def sync_lambda_threads(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    threads: list[threading.Thread] = []
    for name, w in runai_safetensors_weights_iterator(files):
        t = threading.Thread(target=lambda p=params[name], v=w: copy_param(p, v), daemon=True)
        t.start()
        threads.append(t)
    for t in threads:
        t.join()


def sync_lambda_joined(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        t = threading.Thread(target=lambda p=params[name], v=w: copy_param(p, v), daemon=True)
        t.start()
        t.join()


def _drain(jobs: "queue.Queue[tuple[torch.nn.Parameter, torch.Tensor] | None]") -> None:
    while (job := jobs.get()) is not None:
        try:
            copy_param(*job)
        finally:
            jobs.task_done()
    jobs.task_done()


def sync_queue_join_late(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    jobs: "queue.Queue[tuple[torch.nn.Parameter, torch.Tensor] | None]" = queue.Queue()
    threading.Thread(target=_drain, args=(jobs,), daemon=True).start()
    for name, w in runai_safetensors_weights_iterator(files):
        jobs.put((params[name], w))
    jobs.put(None)
    jobs.join()


def sync_queue_join_each(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    jobs: "queue.Queue[tuple[torch.nn.Parameter, torch.Tensor] | None]" = queue.Queue()
    threading.Thread(target=_drain, args=(jobs,), daemon=True).start()
    for name, w in runai_safetensors_weights_iterator(files):
        jobs.put((params[name], w))
        jobs.join()
    jobs.put(None)


def sync_first_completed(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    pending: set[Future] = set()
    for name, w in runai_safetensors_weights_iterator(files):
        pending.add(pool.submit(copy_param, params[name], w))
        _, pending = wait(pending, return_when=FIRST_COMPLETED)
    wait(pending)


def sync_first_completed_single(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        fut = pool.submit(copy_param, params[name], w)
        wait([fut], return_when=FIRST_COMPLETED)


def sync_pool_per_tensor_nowait(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        ex = ThreadPoolExecutor(max_workers=1)
        ex.submit(copy_param, params[name], w)
        ex.shutdown(wait=False)


def sync_pool_per_tensor(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        ex = ThreadPoolExecutor(max_workers=1)
        ex.submit(copy_param, params[name], w)
        ex.shutdown()


def sync_event_peek(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> list[str]:
    params = dict(model.named_parameters())
    slow: list[str] = []
    for name, w in runai_safetensors_weights_iterator(files):
        done = threading.Event()
        pool.submit(copy_and_signal, params[name], w, done)
        if not done.is_set():
            slow.append(name)
    return slow


def sync_event_wait(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        done = threading.Event()
        pool.submit(copy_and_signal, params[name], w, done)
        done.wait()
