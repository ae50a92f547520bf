"""Helpers that fill a staging buffer (shared by the prefetchers)."""

from __future__ import annotations

import torch


def fill_stage(stage: torch.Tensor, src: torch.Tensor) -> None:
    stage[: src.shape[0]].copy_(src)


def wait_then_fill(stage: torch.Tensor, src: torch.Tensor, copied: torch.cuda.Event) -> None:
    copied.synchronize()
    stage[: src.shape[0]].copy_(src)
