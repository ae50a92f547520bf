"""The overlap scheduler: launches the fetch of step N and resolves it while step N+1 runs."""

from __future__ import annotations

import numpy as np
import torch


class EarlyMarkedFetches:
    def __init__(self) -> None:
        self.inflight: dict[int, tuple[torch.Tensor, torch.cuda.Event]] = {}

    def launch(self, bid: int, next_ids: torch.Tensor) -> None:
        ev = torch.cuda.Event()
        ev.record()
        self.inflight[bid] = (next_ids.to("cpu", non_blocking=True), ev)

    def resolve(self, bid: int) -> set[int]:
        host, ev = self.inflight.pop(bid)
        ev.synchronize()
        return set(host.numpy().tolist())


class SafeFetches:
    def __init__(self) -> None:
        self.inflight: dict[int, tuple[torch.Tensor, torch.cuda.Event]] = {}

    def launch(self, bid: int, next_ids: torch.Tensor) -> None:
        host = next_ids.to("cpu", non_blocking=True)
        ev = torch.cuda.Event()
        ev.record()
        self.inflight[bid] = (host, ev)

    def resolve(self, bid: int) -> set[int]:
        host, ev = self.inflight.pop(bid)
        ev.synchronize()
        return set(host.numpy().tolist())


class TopKOnHost:
    """Scores fetched on a side stream into a pinned slot, ranked on the host."""

    def __init__(self, cap: int) -> None:
        self.pinned = torch.empty(cap, dtype=torch.float32, pin_memory=True)
        self.copy_stream = torch.cuda.Stream()

    def _wait_copies_soft(self) -> None:
        torch.cuda.current_stream().wait_stream(self.copy_stream)

    def _wait_copies(self) -> None:
        self.copy_stream.synchronize()

    def rank_soft(self, scores: torch.Tensor, k: int) -> np.ndarray:
        n = scores.numel()
        with torch.cuda.stream(self.copy_stream):
            self.pinned[:n].copy_(scores, non_blocking=True)
        self._wait_copies_soft()
        return np.argsort(-self.pinned[:n].numpy())[:k]

    def rank(self, scores: torch.Tensor, k: int) -> np.ndarray:
        n = scores.numel()
        with torch.cuda.stream(self.copy_stream):
            self.pinned[:n].copy_(scores, non_blocking=True)
        self._wait_copies()
        return np.argsort(-self.pinned[:n].numpy())[:k]
