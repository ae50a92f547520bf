"""Parameter writes shared by every loader."""

from __future__ import annotations

import torch


def copy_param(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(w.view_as(param))


def copy_rows(param: torch.nn.Parameter, w: torch.Tensor, start: int) -> None:
    with torch.no_grad():
        param[start : start + w.shape[0]].copy_(w)
