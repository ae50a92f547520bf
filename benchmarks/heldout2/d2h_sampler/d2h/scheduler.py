"""Overlap scheduler: launch the copy of step N, resolve it while step N+1 runs."""
from __future__ import annotations

from typing import Optional

import torch


class OverlapScheduler:
    def __init__(self) -> None:
        self.pending: Optional[torch.Tensor] = None
        self.done: Optional[torch.cuda.Event] = None

    def launch(self, next_ids: torch.Tensor) -> None:
        self.pending = next_ids.to("cpu", non_blocking=True)
        self.done = torch.cuda.Event()
        self.done.record()

    def resolve(self) -> list[int]:
        assert self.pending is not None and self.done is not None
        self.done.synchronize()
        return self.pending.tolist()

    def resolve_eager(self) -> list[int]:
        assert self.pending is not None
        return self.pending.tolist()


def run_step(sched: OverlapScheduler, next_ids: torch.Tensor, eager: bool) -> list[int]:
    sched.launch(next_ids)
    if eager:
        return sched.resolve_eager()
    return sched.resolve()
