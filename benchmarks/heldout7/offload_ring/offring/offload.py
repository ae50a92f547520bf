"""Swap-out of optimizer state to a pinned host mirror, then to disk on a writer thread."""

from __future__ import annotations

import threading

import numpy as np
import torch


class StateMirror:
    def __init__(self, numel: int) -> None:
        self.host = torch.empty(numel, dtype=torch.float32, pin_memory=True)
        self.copied = torch.cuda.Event()

    def _persist(self, host: torch.Tensor, path: str) -> None:
        np.save(path, host.numpy())

    def _persist_synced(self, host: torch.Tensor, path: str) -> None:
        self.copied.synchronize()
        np.save(path, host.numpy())

    def swap_out(self, state: torch.Tensor, path: str) -> None:
        self.host[: state.numel()].copy_(state.view(-1), non_blocking=True)
        torch.save(self.host, path)

    def swap_out_synced(self, state: torch.Tensor, path: str) -> None:
        self.host[: state.numel()].copy_(state.view(-1), non_blocking=True)
        self.copied.record()
        self.copied.synchronize()
        torch.save(self.host, path)

    def swap_out_background(self, state: torch.Tensor, path: str) -> threading.Thread:
        self.host[: state.numel()].copy_(state.view(-1), non_blocking=True)
        writer = threading.Thread(target=self._persist, args=(self.host, path))
        writer.start()
        return writer

    def swap_out_background_synced(self, state: torch.Tensor, path: str) -> threading.Thread:
        self.host[: state.numel()].copy_(state.view(-1), non_blocking=True)
        self.copied.record()
        writer = threading.Thread(target=self._persist_synced, args=(self.host, path))
        writer.start()
        return writer
