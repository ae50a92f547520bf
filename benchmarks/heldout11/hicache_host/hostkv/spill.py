"""Spill of cold KV blocks into a pinned host pool, with an index of the spilled tokens."""

from __future__ import annotations

import pickle

import numpy as np
import torch


class SpillPool:
    def __init__(self, tokens: int, width: int) -> None:
        self.keys = torch.empty(tokens, dtype=torch.int64, pin_memory=True)
        self.rows = torch.empty((tokens, width), dtype=torch.float16, pin_memory=True)

    def spill_and_locate(self, dev_keys: torch.Tensor, pivot: int) -> int:
        self.keys.copy_(dev_keys, non_blocking=True)
        return int(np.searchsorted(self.keys.numpy(), pivot))

    def spill_and_locate_synced(self, dev_keys: torch.Tensor, pivot: int) -> int:
        self.keys.copy_(dev_keys, non_blocking=True)
        torch.cuda.synchronize()
        return int(np.searchsorted(self.keys.numpy(), pivot))

    def spill_and_serialise(self, dev_rows: torch.Tensor) -> bytes:
        self.rows.copy_(dev_rows, non_blocking=True)
        return pickle.dumps(self.rows)

    def spill_and_serialise_synced(self, dev_rows: torch.Tensor) -> bytes:
        self.rows.copy_(dev_rows, non_blocking=True)
        landed = torch.cuda.Event()
        landed.record()
        landed.synchronize()
        return pickle.dumps(self.rows)
