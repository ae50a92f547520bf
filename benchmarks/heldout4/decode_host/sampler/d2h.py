"""Device-to-host transfers of sampler outputs."""

from __future__ import annotations

import torch

from sampler.consts import HOST


def fetch_async(t: torch.Tensor) -> torch.Tensor:
    """Start copying `t` to the host; the caller must synchronise before reading."""
    return t.to(HOST, non_blocking=True)


def fetch(t: torch.Tensor, non_blocking: bool = False) -> torch.Tensor:
    return t.to("cpu", non_blocking=non_blocking)
