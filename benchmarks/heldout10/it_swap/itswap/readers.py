"""How we open checkpoints: zero-copy for streaming into existing parameters, owned otherwise."""

from __future__ import annotations

import dataclasses
import functools
from typing import Iterator

import torch
from instanttensor import safe_open

# Zero-copy: each tensor is a view of the reader's GPU ring buffer, reused as it reads on.
open_streaming = functools.partial(safe_open, framework="pt", copy=False)

ZERO_COPY = {"copy": False}


@dataclasses.dataclass
class SwapConfig:
    device: int = 0
    zero_copy: bool = True


def open_owned(files: list[str], device: int):
    return safe_open(files, framework="pt", device=device)


def named_tensors(files: list[str], device: int) -> Iterator[tuple[str, torch.Tensor]]:
    with safe_open(files, framework="pt", device=device, **ZERO_COPY) as f:
        yield from f.tensors()


def named_tensors_owned(files: list[str], device: int) -> Iterator[tuple[str, torch.Tensor]]:
    with safe_open(files, framework="pt", device=device, copy=True) as f:
        yield from f.tensors()


def open_for(cfg: SwapConfig, files: list[str]):
    return safe_open(files, framework="pt", device=cfg.device, copy=not cfg.zero_copy)
