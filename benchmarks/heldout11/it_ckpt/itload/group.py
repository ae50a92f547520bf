"""Ways the engine keeps tensors while it walks a checkpoint."""

from __future__ import annotations

import heapq
from collections import defaultdict, deque

import torch
from instanttensor import safe_open

from itload.readers import CheckpointReader, ReaderConfig, env_reader, open_reader


def layer_of(name: str) -> int:
    parts = name.split(".")
    return int(parts[2]) if len(parts) > 2 and parts[2].isdigit() else -1


def group_by_layer_fast(files: list[str]) -> dict[int, list[torch.Tensor]]:
    buckets: defaultdict[int, list[torch.Tensor]] = defaultdict(list)
    with open_reader(files, device=0, zero_copy=True) as f:
        for name, t in f.tensors():
            buckets[layer_of(name)].append(t)
    return dict(buckets)


def group_by_layer(files: list[str]) -> dict[int, list[torch.Tensor]]:
    buckets: defaultdict[int, list[torch.Tensor]] = defaultdict(list)
    with open_reader(files, device=0) as f:
        for name, t in f.tensors():
            buckets[layer_of(name)].append(t)
    return dict(buckets)


def last_tensor(files: list[str], cfg: ReaderConfig = ReaderConfig()) -> deque:
    with safe_open(files, framework="pt", device=cfg.device, copy=cfg.copy) as f:
        tail = deque(f.tensors(), maxlen=1)
    return tail


def last_tensor_owned(files: list[str], cfg: ReaderConfig = ReaderConfig()) -> deque:
    with safe_open(files, framework="pt", device=cfg.device, copy=cfg.copy) as f:
        tail = deque(((n, t.clone()) for n, t in f.tensors()), maxlen=1)
    return tail


def largest(files: list[str], k: int = 4) -> list[tuple[str, torch.Tensor]]:
    with CheckpointReader.zero_copy(files) as f:
        top = heapq.nlargest(k, f.tensors(), key=lambda nt: nt[1].numel())
    return top


def largest_owned(files: list[str], k: int = 4) -> list[tuple[str, torch.Tensor]]:
    with CheckpointReader.owned(files) as f:
        top = heapq.nlargest(k, f.tensors(), key=lambda nt: nt[1].numel())
    return top


def columns(files: list[str]) -> tuple[tuple[str, ...], tuple[torch.Tensor, ...]]:
    with env_reader(files) as f:
        names, tensors = zip(*f.tensors())
    return names, tensors


def columns_on_host(files: list[str]) -> tuple[tuple[str, ...], tuple[torch.Tensor, ...]]:
    with env_reader(files) as f:
        names, tensors = zip(*((n, t.cpu()) for n, t in f.tensors()))
    return names, tensors


def fold_state(files: list[str]) -> dict[str, torch.Tensor]:
    sd: dict[str, torch.Tensor] = {}
    with safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            sd = {**sd, name: t}
    return sd


def fold_state_owned(files: list[str]) -> dict[str, torch.Tensor]:
    sd: dict[str, torch.Tensor] = {}
    with safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            sd = {**sd, name: t.clone()}
    return sd
