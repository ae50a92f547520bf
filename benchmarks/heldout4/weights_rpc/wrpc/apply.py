"""Write one tensor into the live model (runs on a worker thread)."""

from __future__ import annotations

import torch


def assign(param: torch.Tensor, value: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(value)
