"""Small overlap helpers shared by the loaders."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Callable, Iterable

import torch


def copy_param(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    param.data.copy_(w)


class CopyBatch:
    """Submit copies inside the block; leaving it waits for all of them."""

    def __init__(self, pool: ThreadPoolExecutor) -> None:
        self.pool = pool
        self.futures: list[Future] = []

    def copy(self, param: torch.nn.Parameter, w: torch.Tensor) -> None:
        self.futures.append(self.pool.submit(copy_param, param, w))

    def __enter__(self) -> CopyBatch:
        return self

    def __exit__(self, *exc: object) -> None:
        for f in self.futures:
            f.result()
        self.futures.clear()


@dataclass
class CopyJob:
    name: str
    param: torch.nn.Parameter
    weight: torch.Tensor
    futures: list[Future] = field(default_factory=list)

    def launch(self, pool: ThreadPoolExecutor) -> Future:
        fut = pool.submit(copy_param, self.param, self.weight)
        self.futures.append(fut)
        return fut


def for_each(weights: Iterable[tuple[str, torch.Tensor]], fn: Callable[[str, torch.Tensor], object]) -> int:
    count = 0
    for name, w in weights:
        fn(name, w)
        count += 1
    return count
