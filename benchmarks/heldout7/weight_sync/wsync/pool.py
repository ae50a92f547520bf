"""The engine's overlap helper, shaped like SGLang's maybe_executor_submit."""

from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, Callable

import torch


def run_maybe_async(pool: ThreadPoolExecutor, futures: list[Future], overlap: bool,
                    fn: Callable[..., Any], *args: Any) -> None:
    if overlap:
        futures.append(pool.submit(fn, *args))
    else:
        fn(*args)


def copy_param(param: torch.Tensor, w: torch.Tensor) -> None:
    param.data.copy_(w)
