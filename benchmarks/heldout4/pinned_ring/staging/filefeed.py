"""Read a packed token file in chunks and feed the device."""

from __future__ import annotations

import os
from typing import Iterator

import numpy as np
import torch

SLOTS = 2


def feed_unfenced(path: str, chunk: int, device: torch.device) -> Iterator[torch.Tensor]:
    slots = [torch.empty(chunk, dtype=torch.uint8, pin_memory=True) for _ in range(SLOTS)]
    views = [s.numpy() for s in slots]
    fd = os.open(path, os.O_RDONLY)
    try:
        offset, i = 0, 0
        while True:
            got = os.preadv(fd, [views[i % SLOTS]], offset)
            if got == 0:
                break
            yield slots[i % SLOTS][:got].to(device, non_blocking=True)
            offset += got
            i += 1
    finally:
        os.close(fd)


def feed_fenced(path: str, chunk: int, device: torch.device) -> Iterator[torch.Tensor]:
    slots = [torch.empty(chunk, dtype=torch.uint8, pin_memory=True) for _ in range(SLOTS)]
    fences = [torch.cuda.Event() for _ in range(SLOTS)]
    fd = os.open(path, os.O_RDONLY)
    try:
        offset, i = 0, 0
        while True:
            k = i % SLOTS
            fences[k].synchronize()
            got = os.preadv(fd, [slots[k].numpy()], offset)
            if got == 0:
                break
            out = slots[k][:got].to(device, non_blocking=True)
            fences[k].record()
            yield out
            offset += got
            i += 1
    finally:
        os.close(fd)
