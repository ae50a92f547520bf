"""Callable sinks for ``stream_into``."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait

import torch


def _assign(param: torch.nn.Parameter, src: torch.Tensor) -> None:
    with torch.no_grad():
        param.data.copy_(src)


class PooledSink:
    """Copies on a pool; call ``drain()`` after the stream ends."""

    def __init__(self, params: dict[str, torch.nn.Parameter], pool: ThreadPoolExecutor) -> None:
        self.params = params
        self.pool = pool
        self.futures: list[Future] = []

    def __call__(self, name: str, tensor: torch.Tensor) -> None:
        self.futures.append(self.pool.submit(_assign, self.params[name], tensor))

    def drain(self) -> None:
        wait(self.futures)


class LockstepSink:
    def __init__(self, params: dict[str, torch.nn.Parameter], pool: ThreadPoolExecutor) -> None:
        self.params = params
        self.pool = pool

    def __call__(self, name: str, tensor: torch.Tensor) -> None:
        self.pool.submit(_assign, self.params[name], tensor).result()


class DeviceSink:
    """Uploads each tensor to the GPU on a side stream so uploads overlap compute."""

    def __init__(self, params: dict[str, torch.nn.Parameter], device: torch.device) -> None:
        self.params = params
        self.stream = torch.cuda.Stream(device=device)

    def __call__(self, name: str, tensor: torch.Tensor) -> None:
        with torch.cuda.stream(self.stream):
            self.params[name].data.copy_(tensor, non_blocking=True)

    def finish(self) -> None:
        self.stream.synchronize()


class SyncedDeviceSink(DeviceSink):
    def __call__(self, name: str, tensor: torch.Tensor) -> None:
        with torch.cuda.stream(self.stream):
            self.params[name].data.copy_(tensor, non_blocking=True)
        self.stream.synchronize()
