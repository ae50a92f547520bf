"""The pool helper shared by every reload path."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

import torch


def copy_param(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(w)


def maybe_submit(pool: ThreadPoolExecutor, futs: list[Future], fn: Callable[..., Any], *args: Any, use_async: bool) -> None:
    if use_async:
        futs.append(pool.submit(fn, *args))
    else:
        fn(*args)


def run_inline(pool: ThreadPoolExecutor, futs: list[Future], param: torch.nn.Parameter, w: torch.Tensor) -> None:
    copy_param(param, w)


def run_pooled(pool: ThreadPoolExecutor, futs: list[Future], param: torch.nn.Parameter, w: torch.Tensor) -> None:
    futs.append(pool.submit(copy_param, param, w))
