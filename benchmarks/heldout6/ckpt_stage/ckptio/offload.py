"""Optimizer-state offload: GPU state copied into a pinned mirror, then written to disk."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch


def _write(path: str, t: torch.Tensor) -> None:
    torch.save(t, path)


class StateMirror:
    def __init__(self, numel: int) -> None:
        self.cpu_state = torch.empty(numel, dtype=torch.float32, pin_memory=True)
        self.writer = ThreadPoolExecutor(max_workers=1)

    def save(self, gpu_state: torch.Tensor, path: str) -> None:
        self.cpu_state.copy_(gpu_state, non_blocking=True)
        torch.save(self.cpu_state, path)

    def save_synced(self, gpu_state: torch.Tensor, path: str) -> None:
        self.cpu_state.copy_(gpu_state, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        torch.save(self.cpu_state.clone(), path)

    def save_background(self, gpu_state: torch.Tensor, path: str):
        self.cpu_state.copy_(gpu_state, non_blocking=True)
        return self.writer.submit(_write, path, self.cpu_state)

    def save_background_synced(self, gpu_state: torch.Tensor, path: str):
        self.cpu_state.copy_(gpu_state, non_blocking=True)
        torch.cuda.synchronize()
        return self.writer.submit(_write, path + ".synced", self.cpu_state)

    def save_numpy(self, gpu_state: torch.Tensor, path: str) -> None:
        self.cpu_state.copy_(gpu_state, non_blocking=True)
        np.save(path, self.cpu_state.numpy())
