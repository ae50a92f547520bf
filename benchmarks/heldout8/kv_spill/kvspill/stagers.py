"""Host-to-device stagers: pinned buffers the CPU fills and the copy engine uploads."""

from __future__ import annotations

import numpy as np
import torch


class FencedDoubleStager:
    """Two pinned buffers taken in turn, each reused only once its last upload is done."""

    def __init__(self, n: int, device: torch.device) -> None:
        self._bufs = [torch.empty(n, dtype=torch.float16, pin_memory=True) for _ in range(2)]
        self._uploaded = [torch.cuda.Event(), torch.cuda.Event()]
        self._turn = 0
        self.dst = torch.empty(n, dtype=torch.float16, device=device)

    @property
    def current(self) -> torch.Tensor:
        return self._bufs[self._turn]

    def push(self, block: np.ndarray) -> None:
        self._uploaded[self._turn].synchronize()
        np.copyto(self.current.numpy(), block)
        self.dst.copy_(self.current, non_blocking=True)
        self._uploaded[self._turn].record()
        self._turn ^= 1


class DoubleStager:
    """Two pinned buffers taken in turn (the quick version: no fence)."""

    def __init__(self, n: int, device: torch.device) -> None:
        self._bufs = [torch.empty(n, dtype=torch.float16, pin_memory=True) for _ in range(2)]
        self._turn = 0
        self.dst = torch.empty(n, dtype=torch.float16, device=device)

    @property
    def current(self) -> torch.Tensor:
        return self._bufs[self._turn]

    def push(self, block: np.ndarray) -> None:
        np.copyto(self.current.numpy(), block)
        self.dst.copy_(self.current, non_blocking=True)
        self._turn ^= 1


class SideStreamStager:
    """Uploads on a dedicated H2D stream; compute waits for it on the device."""

    def __init__(self, n: int, device: torch.device) -> None:
        self.stage = torch.empty(n, dtype=torch.float16, pin_memory=True)
        self.gpu = torch.empty(n, dtype=torch.float16, device=device)
        self.h2d = torch.cuda.Stream(device)

    def push(self, block: torch.Tensor) -> None:
        n = block.numel()
        self.stage[:n].copy_(block)
        with torch.cuda.stream(self.h2d):
            self.gpu[:n].copy_(self.stage[:n], non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.h2d)


class SyncedSideStreamStager:
    def __init__(self, n: int, device: torch.device) -> None:
        self.stage = torch.empty(n, dtype=torch.float16, pin_memory=True)
        self.gpu = torch.empty(n, dtype=torch.float16, device=device)
        self.h2d = torch.cuda.Stream(device)

    def push(self, block: torch.Tensor) -> None:
        n = block.numel()
        self.h2d.synchronize()
        self.stage[:n].copy_(block)
        with torch.cuda.stream(self.h2d):
            self.gpu[:n].copy_(self.stage[:n], non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.h2d)


class MaskUploader:
    """Builds the attention mask on the host and hands a fresh device copy to the compute stream."""

    def __init__(self, n: int, device: torch.device) -> None:
        self.stage = torch.empty(n, dtype=torch.bool, pin_memory=True)
        self.device = device
        self.compute = torch.cuda.Stream(device)

    def upload(self, valid: int) -> torch.Tensor:
        self.stage.fill_(False)
        self.stage[:valid] = True
        mask = self.stage.to(self.device, non_blocking=True)
        mask.record_stream(self.compute)
        return mask


class BlockingMaskUploader:
    def __init__(self, n: int, device: torch.device) -> None:
        self.stage = torch.empty(n, dtype=torch.bool, pin_memory=True)
        self.device = device
        self.compute = torch.cuda.Stream(device)

    def upload(self, valid: int) -> torch.Tensor:
        self.stage.fill_(False)
        self.stage[:valid] = True
        mask = self.stage.to(self.device)
        mask.record_stream(self.compute)
        return mask


class DeltaUploader:
    """Keeps a running sum on the host (pinned) and mirrors it to the device after each delta."""

    def __init__(self, n: int, device: torch.device) -> None:
        self.acc = torch.zeros(n, dtype=torch.float32, pin_memory=True)
        self.gpu = torch.zeros(n, dtype=torch.float32, device=device)
        self.mirrored = torch.cuda.Event()

    def add(self, delta: torch.Tensor) -> None:
        self.mirrored.synchronize()
        self.acc += delta
        self.gpu.copy_(self.acc, non_blocking=True)
        self.mirrored.record()


class EarlyEventDeltaUploader:
    def __init__(self, n: int, device: torch.device) -> None:
        self.acc = torch.zeros(n, dtype=torch.float32, pin_memory=True)
        self.gpu = torch.zeros(n, dtype=torch.float32, device=device)
        self.mirrored = torch.cuda.Event()

    def add(self, delta: torch.Tensor) -> None:
        self.mirrored.synchronize()
        self.acc += delta
        self.mirrored.record()
        self.gpu.copy_(self.acc, non_blocking=True)
