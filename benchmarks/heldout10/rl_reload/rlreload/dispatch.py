"""Ways of sending one weight copy to the pool, each decided by a deferral policy."""

from __future__ import annotations

import dataclasses
import functools
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Callable, Optional

import torch

Policy = Callable[[torch.Tensor], bool]


def copy_param(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(w)


def guarded_by(policy: Policy):
    """Decorates a (param, w) copier: deferred copies go to the pool, the others run inline."""

    def wrap(fn):
        @functools.wraps(fn)
        def run(pool: ThreadPoolExecutor, param: torch.nn.Parameter, w: torch.Tensor) -> Optional[Future]:
            if policy(w):
                return pool.submit(fn, param, w)
            fn(param, w)
            return None

        return run

    return wrap


@dataclasses.dataclass(frozen=True)
class ReloadConfig:
    defer: Policy
    workers: int = 8


class Scheduler:
    """Keeps the pool and the futures of one reload."""

    def __init__(self, workers: int = 8) -> None:
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.futures: list[Future] = []

    def schedule(self, param: torch.nn.Parameter, w: torch.Tensor, *, use_async: bool) -> None:
        if use_async:
            self.futures.append(self.pool.submit(copy_param, param, w))
        else:
            copy_param(param, w)

    def drain(self) -> None:
        for f in self.futures:
            f.result()
        self.futures.clear()
