"""Group streamed weights into buckets of about ``cap`` bytes for the rollout engines."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable, Iterator

import torch


@dataclass
class Bucket:
    names: list[str] = field(default_factory=list)
    tensors: list[torch.Tensor] = field(default_factory=list)
    nbytes: int = 0

    def add(self, name: str, t: torch.Tensor) -> None:
        self.names.append(name)
        self.tensors.append(t)
        self.nbytes += t.numel() * t.element_size()


def iter_buckets(weights: Iterable[tuple[str, torch.Tensor]], cap: int) -> Iterator[Bucket]:
    bucket = Bucket()
    for name, w in weights:
        bucket.names.append(name)
        bucket.tensors.append(w)
        bucket.nbytes += w.numel() * w.element_size()
        if bucket.nbytes >= cap:
            yield bucket
            bucket = Bucket()
    if bucket.names:
        yield bucket


def iter_owned_buckets(weights: Iterable[tuple[str, torch.Tensor]], cap: int) -> Iterator[Bucket]:
    bucket = Bucket()
    for name, w in weights:
        bucket.add(name, w.detach().clone())
        if bucket.nbytes >= cap:
            yield bucket
            bucket = Bucket()
    if bucket.names:
        yield bucket
