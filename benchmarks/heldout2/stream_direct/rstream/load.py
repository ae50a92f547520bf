"""Entry points."""
from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import torch

from .reader import stream_into
from .sinks import DeviceSink, LockstepSink, PooledSink, SyncedDeviceSink, _assign


def load_pooled(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    sink = PooledSink(dict(model.named_parameters()), pool)
    stream_into(files, sink)
    sink.drain()


def load_lockstep(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    stream_into(files, LockstepSink(dict(model.named_parameters()), pool))


def load_to_device(model: torch.nn.Module, files: list[str], device: torch.device, synced: bool) -> None:
    params = dict(model.named_parameters())
    if synced:
        stream_into(files, SyncedDeviceSink(params, device))
    else:
        sink = DeviceSink(params, device)
        stream_into(files, sink)
        sink.finish()


def load_threads(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    threads: list[threading.Thread] = []

    def on_tensor(name: str, tensor: torch.Tensor) -> None:
        th = threading.Thread(target=_assign, args=(params[name], tensor), daemon=True)
        th.start()
        threads.append(th)

    stream_into(files, on_tensor)
    for th in threads:
        th.join()


def load_cloned(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs = []
    stream_into(files, lambda n, t: futs.append(pool.submit(_assign, params[n], t.clone())))
    for f in futs:
        f.result()
