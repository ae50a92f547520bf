"""Generator stages. Each takes an iterator of (name, tensor) and yields (name, tensor)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import torch
from vllm.model_executor.model_loader.weight_utils import runai_safetensors_weights_iterator

Named = tuple[str, torch.Tensor]


def open_stream(files: list[str]) -> Iterator[Named]:
    yield from runai_safetensors_weights_iterator(files, False)


def renamed(stream: Iterable[Named], mapping: dict[str, str]) -> Iterator[Named]:
    for name, w in stream:
        for old, new in mapping.items():
            name = name.replace(old, new)
        yield name, w


def skip_rotary(stream: Iterable[Named]) -> Iterator[Named]:
    return ((n, w) for n, w in stream if "rotary_emb.inv_freq" not in n)


def to_device(stream: Iterable[Named], device: torch.device) -> Iterator[Named]:
    for name, w in stream:
        yield name, w.to(device, non_blocking=True)


def to_device_fenced(stream: Iterable[Named], device: torch.device) -> Iterator[Named]:
    for name, w in stream:
        on_dev = w.to(device, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        yield name, on_dev


def to_device_pinned(stream: Iterable[Named], device: torch.device) -> Iterator[Named]:
    for name, w in stream:
        staged = w.pin_memory()
        yield name, staged.to(device, non_blocking=True)
