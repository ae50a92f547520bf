"""Records the loaders keep between tensors."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import NamedTuple, Optional

import torch

_EXPERT = re.compile(r"layers\.(\d+)\.mlp\.experts\.(\d+)\.(gate_proj|up_proj|down_proj)\.weight")


class ExpertShard(NamedTuple):
    layer: int
    expert: int
    proj: str
    weight: torch.Tensor


@dataclass
class TiedWeights:
    embed: Optional[torch.Tensor] = None
    lm_head: Optional[torch.Tensor] = None


@dataclass(frozen=True)
class CopyConfig:
    overlap: bool = True
    device: str = "cuda:0"


def parse_expert(name: str, w: torch.Tensor) -> Optional[ExpertShard]:
    m = _EXPERT.fullmatch(name)
    if m is None:
        return None
    return ExpertShard(int(m[1]), int(m[2]), m[3], w)
