"""The copies themselves, and the timing decorator every loader wears."""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable
from concurrent.futures import Executor, Future
from typing import ParamSpec, TypeVar

import torch

log = logging.getLogger(__name__)
P = ParamSpec("P")
R = TypeVar("R")


def timed(label: str) -> Callable[[Callable[P, R]], Callable[P, R]]:
    def decorate(fn: Callable[P, R]) -> Callable[P, R]:
        @functools.wraps(fn)
        def run(*args: P.args, **kwargs: P.kwargs) -> R:
            start = time.perf_counter()
            try:
                return fn(*args, **kwargs)
            finally:
                log.info("%s took %.2fs", label, time.perf_counter() - start)

        return run

    return decorate


def copy_param(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    param.data.copy_(w)


def copy_row(dst_row: torch.Tensor, src_row: torch.Tensor) -> None:
    dst_row.copy_(src_row)


async def copy_param_async(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    copy_param(param, w)


@functools.singledispatch
def place(dst: object, w: torch.Tensor, pool: Executor) -> Future[None]:
    raise TypeError(f"cannot place a tensor into {type(dst).__name__}")


@place.register
def _(dst: torch.nn.Parameter, w: torch.Tensor, pool: Executor) -> Future[None]:
    return pool.submit(copy_param, dst, w)


@place.register
def _(dst: torch.Tensor, w: torch.Tensor, pool: Executor) -> Future[None]:
    return pool.submit(dst.copy_, w)
