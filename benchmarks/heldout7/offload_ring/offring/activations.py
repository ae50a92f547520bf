"""Activation checkpoint offload: one pinned buffer per layer group, kept on the object."""

from __future__ import annotations

import numpy as np
import torch


class ActivationStager:
    def __init__(self, numel: int) -> None:
        self.staging = torch.empty(numel, dtype=torch.bfloat16, pin_memory=True)
        self.staged = torch.cuda.Event()

    def reload(self, saved: torch.Tensor, out: torch.Tensor) -> None:
        n = saved.numel()
        self.staging[:n].copy_(saved.view(-1))
        out.view(-1).copy_(self.staging[:n], non_blocking=True)

    def reload_fenced(self, saved: torch.Tensor, out: torch.Tensor) -> None:
        n = saved.numel()
        self.staged.synchronize()
        self.staging[:n].copy_(saved.view(-1))
        out.view(-1).copy_(self.staging[:n], non_blocking=True)
        self.staged.record()


class NumpyStager:
    """Fills the pinned buffer from NumPy arrays through its NumPy view."""

    def __init__(self, numel: int) -> None:
        self.pinned = torch.empty(numel, dtype=torch.float32).pin_memory()
        self.pinned_np = self.pinned.numpy()

    def push(self, arr: np.ndarray, out: torch.Tensor) -> None:
        np.copyto(self.pinned_np[: arr.size], arr.ravel())
        out.view(-1).copy_(self.pinned[: arr.size], non_blocking=True)

    def push_synced(self, arr: np.ndarray, out: torch.Tensor) -> None:
        torch.cuda.synchronize()
        np.copyto(self.pinned_np[: arr.size], arr.ravel())
        out.view(-1).copy_(self.pinned[: arr.size], non_blocking=True)
