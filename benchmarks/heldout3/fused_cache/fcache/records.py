"""Small records the fusing loaders pass around."""
from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class PendingPair:
    """Half of a fused projection, waiting for its partner."""

    name: str
    tensor: torch.Tensor


@dataclass
class LayerStats:
    names: list[str] = field(default_factory=list)
    numel: int = 0
