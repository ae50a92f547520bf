"""Group (name, tensor) streams into size-capped buckets for the inference engine."""
from __future__ import annotations

import dataclasses
from typing import Iterable, Iterator, List, Tuple

import torch

Weights = Iterable[Tuple[str, torch.Tensor]]


@dataclasses.dataclass
class Bucket:
    names: List[str] = dataclasses.field(default_factory=list)
    tensors: List[torch.Tensor] = dataclasses.field(default_factory=list)
    nbytes: int = 0

    def add(self, name: str, t: torch.Tensor) -> None:
        self.names.append(name)
        self.tensors.append(t)
        self.nbytes += t.numel() * t.element_size()


def iter_buckets(weights: Weights, cap_bytes: int) -> Iterator[Bucket]:
    bucket = Bucket()
    for name, w in weights:
        bucket.names.append(name)
        bucket.tensors.append(w)
        bucket.nbytes += w.numel() * w.element_size()
        if bucket.nbytes >= cap_bytes:
            yield bucket
            bucket = Bucket()
    if bucket.names:
        yield bucket


def iter_owned_buckets(weights: Weights, cap_bytes: int) -> Iterator[Bucket]:
    bucket = Bucket()
    for name, w in weights:
        bucket.add(name, w.clone())
        if bucket.nbytes >= cap_bytes:
            yield bucket
            bucket = Bucket()
    if bucket.names:
        yield bucket
