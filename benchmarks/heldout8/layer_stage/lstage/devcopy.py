"""Host-to-device copy helpers shared by the stagers."""

from __future__ import annotations

import torch


def to_device_async(w: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Enqueue the copy and return at once: the caller overlaps it with reading the next tensor."""
    return w.to(device, non_blocking=True)


def to_device_fenced(w: torch.Tensor, device: torch.device) -> torch.Tensor:
    """Enqueue the copy, then wait for it: the host tensor may be reused when this returns."""
    out = w.to(device, non_blocking=True)
    torch.cuda.current_stream(device).synchronize()
    return out
