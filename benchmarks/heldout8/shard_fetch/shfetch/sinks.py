"""Where a loader puts each tensor: anything with `consume` and `flush`."""

from __future__ import annotations

from concurrent.futures import Executor, Future, wait
from typing import Protocol

import torch

from shfetch.copying import copy_param


class TensorSink(Protocol):
    def consume(self, name: str, w: torch.Tensor) -> None: ...

    def flush(self) -> None: ...


class DeferredCopySink:
    """Copies on the pool; `flush` waits for every copy consumed since the last one."""

    def __init__(self, params: dict[str, torch.nn.Parameter], pool: Executor) -> None:
        self.params = params
        self.pool = pool
        self.futures: list[Future[None]] = []

    def consume(self, name: str, w: torch.Tensor) -> None:
        self.futures.append(self.pool.submit(copy_param, self.params[name], w))

    def flush(self) -> None:
        wait(self.futures)
        self.futures.clear()


def build_sink(params: dict[str, torch.nn.Parameter], pool: Executor) -> TensorSink:
    return DeferredCopySink(params, pool)
