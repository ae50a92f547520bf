"""Top-logprob extraction into a pinned host buffer (reused across steps by the caller)."""
from __future__ import annotations

import numpy as np
import torch


def fetch_logprobs(dev_lp: torch.Tensor) -> list[float]:
    out = torch.empty(dev_lp.shape, dtype=dev_lp.dtype, pin_memory=True)
    out.copy_(dev_lp, non_blocking=True)
    arr = out.numpy()
    return arr.tolist()


def fetch_logprobs_synced(dev_lp: torch.Tensor) -> list[float]:
    out = torch.empty(dev_lp.shape, dtype=dev_lp.dtype, pin_memory=True)
    out.copy_(dev_lp, non_blocking=True)
    torch.cuda.synchronize()
    arr = out.numpy()
    return arr.tolist()


def top1_mask(dev_lp: torch.Tensor) -> np.ndarray:
    out = torch.empty(dev_lp.shape, dtype=dev_lp.dtype, pin_memory=True)
    out.copy_(dev_lp, non_blocking=True)
    result = np.zeros(dev_lp.shape, dtype=bool)
    result[:] = out.numpy() > 0
    return result
