"""Upload NumPy batches to the GPU through a pinned staging area."""

from __future__ import annotations

import numpy as np
import torch


class Uploader:
    """One pinned buffer, refilled by every call."""

    def __init__(self, capacity: int, device: torch.device) -> None:
        self.stage = torch.empty(capacity, dtype=torch.uint8, pin_memory=True)
        self.device = device

    def upload(self, arr: np.ndarray) -> torch.Tensor:
        n = arr.nbytes
        self.stage[:n].copy_(torch.from_numpy(arr.reshape(-1).view(np.uint8)))
        return self.stage[:n].to(self.device, non_blocking=True)


class FencedUploader:
    """Same, but waits for the previous upload before reusing the buffer."""

    def __init__(self, capacity: int, device: torch.device) -> None:
        self.stage = torch.empty(capacity, dtype=torch.uint8, pin_memory=True)
        self.device = device
        self.copied = torch.cuda.Event()

    def upload(self, arr: np.ndarray) -> torch.Tensor:
        n = arr.nbytes
        self.copied.synchronize()
        self.stage[:n].copy_(torch.from_numpy(arr.reshape(-1).view(np.uint8)))
        out = self.stage[:n].to(self.device, non_blocking=True)
        self.copied.record()
        return out
