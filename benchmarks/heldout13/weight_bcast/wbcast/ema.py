"""EMA teacher weights kept in pinned host memory and pushed to the rollout GPUs each step."""

from __future__ import annotations

import collections
import math

import torch


class PinnedEMA:
    def __init__(self, numel: int, device: torch.device, decay: float = 0.999) -> None:
        self.host = torch.zeros(numel, dtype=torch.float32, pin_memory=True)
        self.dev = torch.zeros(numel, dtype=torch.float32, device=device)
        self.decay = decay
        self.uploaded = torch.cuda.Event()

    def step(self, fresh: torch.Tensor) -> None:
        self.host.lerp_(fresh, 1.0 - self.decay)
        self.dev.copy_(self.host, non_blocking=True)

    def step_fenced(self, fresh: torch.Tensor) -> None:
        self.uploaded.synchronize()
        self.host.lerp_(fresh, 1.0 - self.decay)
        self.dev.copy_(self.host, non_blocking=True)
        self.uploaded.record()


class QuantStager:
    """Rounds each shard into a pinned buffer before upload; keeps up to `depth` uploads' events."""

    def __init__(self, numel: int, device: torch.device, depth: int = 2) -> None:
        self.stage = torch.empty(numel, dtype=torch.float32, pin_memory=True)
        self.dev = torch.empty(numel, dtype=torch.float32, device=device)
        self.pending: collections.deque[torch.cuda.Event] = collections.deque()
        self.depth = depth

    def push_bounded(self, shard: torch.Tensor) -> None:
        if len(self.pending) >= self.depth:
            self.pending.popleft().synchronize()
        torch.round(shard, decimals=3, out=self.stage)
        self.dev.copy_(self.stage, non_blocking=True)
        ev = torch.cuda.Event()
        ev.record()
        self.pending.append(ev)

    def push_drained(self, shard: torch.Tensor) -> None:
        while self.pending:
            self.pending.popleft().synchronize()
        torch.round(shard, decimals=3, out=self.stage)
        self.dev.copy_(self.stage, non_blocking=True)
        ev = torch.cuda.Event()
        ev.record()
        self.pending.append(ev)


class RowPusher:
    """Pushes host rows (CPU tensors built by the tokenizer workers) to the device one by one."""

    def __init__(self, width: int, device: torch.device) -> None:
        self.row = torch.empty(width, dtype=torch.float16, pin_memory=True)
        self.device = device
        self.side = torch.cuda.Stream(device=device)

    def push(self, rows: list[torch.Tensor]) -> list[torch.Tensor]:
        out = []
        for r in rows:
            n = r.numel()
            self.row.unsqueeze(0)[:, :n] = r
            with torch.cuda.stream(self.side):
                dev = self.row.to(self.device, non_blocking=True)
                dev.record_stream(torch.cuda.current_stream(self.device))
            out.append(dev)
        return out

    def push_synced(self, rows: list[torch.Tensor]) -> list[torch.Tensor]:
        out = []
        for r in rows:
            n = r.numel()
            self.row.unsqueeze(0)[:, :n] = r
            with torch.cuda.stream(self.side):
                dev = self.row.to(self.device, non_blocking=True)
            self.side.synchronize()
            out.append(dev)
        return out


class NormCheck:
    """Per-rank norms of the received shard, fetched back to verify the broadcast."""

    def __init__(self, device: torch.device) -> None:
        self.side = torch.cuda.Stream(device=device)
        self.norm_host = torch.empty(1, dtype=torch.float32, pin_memory=True)

    def finite(self, dev_norm: torch.Tensor) -> bool:
        host = dev_norm.to("cpu", non_blocking=True)
        return math.isfinite(host.item())

    def finite_synced(self, dev_norm: torch.Tensor) -> bool:
        host = dev_norm.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return math.isfinite(host.item())

    def all_finite(self, dev_norm: torch.Tensor) -> bool:
        with torch.cuda.stream(self.side):
            self.norm_host.copy_(dev_norm, non_blocking=True)
        return bool(torch.isfinite(self.norm_host).all())

    def all_finite_synced(self, dev_norm: torch.Tensor) -> bool:
        with torch.cuda.stream(self.side):
            self.norm_host.copy_(dev_norm, non_blocking=True)
        self.side.synchronize()
        return bool(torch.isfinite(self.norm_host).all())
