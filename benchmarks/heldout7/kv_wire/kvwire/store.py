"""The local KV store the receiver writes into (a stand-in for the GPU-side allocator)."""

from __future__ import annotations

import numpy as np


class LocalKVStore:
    def __init__(self) -> None:
        self.blocks: dict[tuple[int, int], np.ndarray] = {}

    def write(self, layer: int, index: int, payload: np.ndarray) -> None:
        self.blocks[(layer, index)] = np.array(payload, copy=True)

    def write_bytes(self, layer: int, index: int, payload: bytes) -> None:
        self.blocks[(layer, index)] = np.frombuffer(payload, dtype=np.float16)
