"""Pinned host memory for KV blocks in transit."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class PinnedSlab:
    n_slots: int
    block_numel: int
    dtype: torch.dtype = torch.float16
    slots: list[torch.Tensor] = field(init=False)
    landed: list[torch.cuda.Event] = field(init=False)

    def __post_init__(self) -> None:
        self.slots = [torch.empty(self.block_numel, dtype=self.dtype, pin_memory=True) for _ in range(self.n_slots)]
        self.landed = [torch.cuda.Event() for _ in range(self.n_slots)]
