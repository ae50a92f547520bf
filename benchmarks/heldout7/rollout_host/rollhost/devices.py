"""Device constants and transfer helpers shared by the workers."""

from __future__ import annotations

import torch

HOST = torch.device("cpu")


def to_host_async(t: torch.Tensor) -> torch.Tensor:
    return t.to(HOST, non_blocking=True)


def to_host(t: torch.Tensor) -> torch.Tensor:
    return t.to(HOST)
