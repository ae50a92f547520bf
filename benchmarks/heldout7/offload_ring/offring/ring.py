"""A ring of pinned host slots, each with the event of the last copy that read it."""

from __future__ import annotations

from dataclasses import dataclass, field

import torch


@dataclass
class PinnedSlot:
    host: torch.Tensor
    read_done: torch.cuda.Event = field(default_factory=torch.cuda.Event)


class PinnedRing:
    def __init__(self, n_slots: int, numel: int, dtype: torch.dtype = torch.float32) -> None:
        self.slots = [PinnedSlot(torch.empty(numel, dtype=dtype, pin_memory=True)) for _ in range(n_slots)]
        self.copy_stream = torch.cuda.Stream()

    def __len__(self) -> int:
        return len(self.slots)

    def slot(self, i: int) -> PinnedSlot:
        return self.slots[i % len(self.slots)]
