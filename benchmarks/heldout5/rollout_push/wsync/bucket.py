"""Pack parameters into one reusable byte bucket."""

from __future__ import annotations

import numpy as np
import torch


class BucketPacker:
    def __init__(self, capacity: int) -> None:
        self._buf = bytearray(capacity)
        self.layout: list[tuple[str, int, int]] = []

    def pack(self, named: list[tuple[str, torch.Tensor]]) -> memoryview:
        self.layout = []
        off = 0
        for name, t in named:
            raw = t.detach().contiguous().view(torch.uint8).reshape(-1).numpy()
            np.frombuffer(self._buf, dtype=np.uint8, count=raw.nbytes, offset=off)[:] = raw
            self.layout.append((name, off, raw.nbytes))
            off += raw.nbytes
        return memoryview(self._buf)[:off]


def buckets(named: list[tuple[str, torch.Tensor]], capacity: int) -> list[list[tuple[str, torch.Tensor]]]:
    out: list[list[tuple[str, torch.Tensor]]] = [[]]
    used = 0
    for name, t in named:
        n = t.numel() * t.element_size()
        if used + n > capacity and out[-1]:
            out.append([])
            used = 0
        out[-1].append((name, t))
        used += n
    return out
