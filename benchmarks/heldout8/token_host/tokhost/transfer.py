"""Device-to-host transfer of sampler outputs, whatever their structure."""

from __future__ import annotations

import functools
from typing import Any

import torch

CPU = torch.device("cpu")


@functools.singledispatch
def to_host(obj: Any, non_blocking: bool = True) -> Any:
    return obj


@to_host.register
def _(obj: torch.Tensor, non_blocking: bool = True) -> torch.Tensor:
    return obj.to(CPU, non_blocking=non_blocking)


@to_host.register
def _(obj: dict, non_blocking: bool = True) -> dict:
    return {key: to_host(value, non_blocking) for key, value in obj.items()}


@to_host.register
def _(obj: list, non_blocking: bool = True) -> list:
    return [to_host(value, non_blocking) for value in obj]
