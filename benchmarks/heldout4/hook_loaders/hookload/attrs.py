"""vLLM-style per-parameter loader attributes."""

from __future__ import annotations

from typing import Any, Callable

import torch

WeightLoader = Callable[[torch.nn.Parameter, torch.Tensor], None]


def default_weight_loader(param: torch.nn.Parameter, loaded_weight: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(loaded_weight)


def set_weight_attrs(param: torch.nn.Parameter, attrs: dict[str, Any]) -> None:
    for key, value in attrs.items():
        setattr(param, key, value)
