"""The decode side's block store (slow: writes go through a pool or a thread)."""

from __future__ import annotations

import threading

import numpy as np


class BlockStore:
    def __init__(self, n_blocks: int, block_elems: int) -> None:
        self.table = np.zeros((n_blocks, block_elems), dtype=np.float16)
        self._lock = threading.Lock()

    def put(self, seq: int, payload: memoryview | bytes) -> None:
        block = np.frombuffer(payload, dtype=np.float16)
        with self._lock:
            self.table[seq % len(self.table), : block.size] = block

    def put_chunk(self, index: int, chunk: memoryview) -> None:
        with self._lock:
            self.table.reshape(-1).view(np.uint8)[index * len(chunk) : (index + 1) * len(chunk)] = np.frombuffer(chunk, dtype=np.uint8)
