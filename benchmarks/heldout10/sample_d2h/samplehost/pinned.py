"""Pinned output slots the scheduler fills at the end of a step and drains at the start of the next."""

from __future__ import annotations

import torch


class TokenSlots:
    def __init__(self, max_batch: int) -> None:
        self.host_ids = torch.empty(max_batch, dtype=torch.int64, pin_memory=True)
        self.n = 0

    def stage(self, ids: torch.Tensor) -> None:
        self.n = ids.shape[0]
        self.host_ids[: self.n].copy_(ids, non_blocking=True)

    def tokens(self) -> list[int]:
        return [int(x) for x in self.host_ids[: self.n]]


class FencedTokenSlots:
    def __init__(self, max_batch: int) -> None:
        self.host_ids = torch.empty(max_batch, dtype=torch.int64, pin_memory=True)
        self.ready = torch.cuda.Event()
        self.n = 0

    def stage(self, ids: torch.Tensor) -> None:
        self.n = ids.shape[0]
        self.host_ids[: self.n].copy_(ids, non_blocking=True)
        self.ready.record()

    def tokens(self) -> list[int]:
        self.ready.synchronize()
        return [int(x) for x in self.host_ids[: self.n]]
