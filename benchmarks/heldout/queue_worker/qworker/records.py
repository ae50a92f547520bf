from dataclasses import dataclass, field
from typing import NamedTuple, Optional

import torch


class WeightChunk(NamedTuple):
    name: str
    tensor: torch.Tensor
    shard_id: Optional[int] = None


@dataclass
class DeferredShard:
    name: str
    tensor: torch.Tensor
    attempts: int = 0
    notes: list = field(default_factory=list)
