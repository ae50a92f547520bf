"""The slot ring: N fixed-size frame slots in one SharedMemory block, filled by decoder processes."""

from __future__ import annotations

import multiprocessing as mp
from dataclasses import dataclass
from multiprocessing.shared_memory import SharedMemory

import numpy as np


@dataclass(frozen=True)
class FrameGeometry:
    height: int = 448
    width: int = 448
    channels: int = 3

    @property
    def nbytes(self) -> int:
        return self.height * self.width * self.channels


class SlotRing:
    def __init__(self, name: str, slots: int, geom: FrameGeometry) -> None:
        self.shm = SharedMemory(name=name)
        self.geom = geom
        self.slots = slots
        self.filled: mp.Queue = mp.Queue()
        self.free: mp.Queue = mp.Queue()

    def acquire(self) -> tuple[int, float]:
        """Block until a decoder filled a slot; returns (slot, timestamp)."""
        return self.filled.get()

    def frame(self, slot: int) -> np.ndarray:
        g = self.geom
        return np.ndarray((g.height, g.width, g.channels), dtype=np.uint8, buffer=self.shm.buf, offset=slot * g.nbytes)

    def release_slot(self, slot: int) -> None:
        """Hand the slot back: a decoder may overwrite it from now on."""
        self.free.put(slot)
