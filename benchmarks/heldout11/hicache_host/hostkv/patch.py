"""Sparse patches of the page table, uploaded through a pinned buffer the patcher keeps."""

from __future__ import annotations

import numpy as np
import torch


class PageTablePatcher:
    def __init__(self, entries: int, device: torch.device) -> None:
        self.host = torch.empty(entries, dtype=torch.int32, pin_memory=True)
        self.dev = torch.empty(entries, dtype=torch.int32, device=device)

    def apply(self, offsets: np.ndarray, pages: np.ndarray) -> None:
        np.put(self.host.numpy(), offsets, pages)
        self.dev.copy_(self.host, non_blocking=True)


class FencedPageTablePatcher:
    def __init__(self, entries: int, device: torch.device) -> None:
        self.host = torch.empty(entries, dtype=torch.int32, pin_memory=True)
        self.dev = torch.empty(entries, dtype=torch.int32, device=device)

    def _fence(self) -> None:
        torch.cuda.synchronize(self.dev.device)

    def apply(self, offsets: np.ndarray, pages: np.ndarray) -> None:
        self._fence()
        np.put(self.host.numpy(), offsets, pages)
        self.dev.copy_(self.host, non_blocking=True)
