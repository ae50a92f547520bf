"""The trainer's side of the slot ring."""

from __future__ import annotations

import math
from multiprocessing.shared_memory import SharedMemory
from queue import Queue

import numpy as np
import torch

IMAGE_SHAPE = (32, 3, 224, 224)
LABEL_OFFSET = math.prod(IMAGE_SHAPE) * 4


class SlotRing:
    def __init__(self, names: list[str], ready: Queue, free: Queue) -> None:
        self.blocks = [SharedMemory(name=n) for n in names]
        self.ready = ready
        self.free = free

    def next_slot(self) -> int | None:
        return self.ready.get()

    def images(self, slot: int) -> torch.Tensor:
        flat = torch.frombuffer(self.blocks[slot].buf, dtype=torch.float32, count=math.prod(IMAGE_SHAPE))
        return flat.view(IMAGE_SHAPE)

    def labels(self, slot: int) -> np.ndarray:
        return np.frombuffer(self.blocks[slot].buf, dtype=np.int64, count=IMAGE_SHAPE[0], offset=LABEL_OFFSET)

    def hand_back(self, slot: int) -> None:
        self.free.put(slot)
