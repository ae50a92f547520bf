"""Device-to-host helpers shared by the sampler and the scheduler."""
from __future__ import annotations

import torch

CPU = torch.device("cpu")


def fetch_async(t: torch.Tensor) -> torch.Tensor:
    """Start copying ``t`` to the host; the caller decides when to wait."""
    return t.to("cpu", non_blocking=True)
