"""How checkpoints are opened.

`open_streaming` reads through InstantTensor's GPU ring buffer without copying (fast, and the
tensors are only valid until the reader moves on); `open_owned` lets every tensor own its
memory (InstantTensor >= 0.1.9 copies by default).
"""

from __future__ import annotations

import torch
from instanttensor import safe_open


def open_streaming(files: list[str], device: int | torch.device):
    return safe_open(files, framework="pt", device=device, copy=False)


def open_owned(files: list[str], device: int | torch.device):
    return safe_open(files, framework="pt", device=device)
