"""The trainer's side of the slot ring."""

from __future__ import annotations

from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory

import numpy as np


class SlotRing:
    def __init__(self, names: list[str], ctrl: Connection) -> None:
        self.blocks = [SharedMemory(name=n) for n in names]
        self.ctrl = ctrl

    def next_ready(self) -> tuple[int, int]:
        slot, n_tokens = self.ctrl.recv()
        return slot, n_tokens

    def tokens(self, slot: int, n_tokens: int) -> np.ndarray:
        return np.ndarray((n_tokens,), dtype=np.int32, buffer=self.blocks[slot].buf)

    def release(self, slot: int) -> None:
        self.ctrl.send(("free", slot))
