"""Caches of checkpoint tensors kept on the GPU between expert swaps."""

import itertools
from collections import OrderedDict
from concurrent.futures import Future, ThreadPoolExecutor

import torch

from .open import open_shards

CACHE_TENSORS = 64
PREVIEW = 16


class TensorLRU:
    def __init__(self) -> None:
        self.cache: OrderedDict[str, torch.Tensor] = OrderedDict()
        self.samples: dict[str, torch.Tensor] = {}

    def warm(self, files: list[str]) -> None:
        with open_shards(files) as f:
            for name, t in f.tensors():
                self.cache[name] = t
                self.cache.move_to_end(name)
                if len(self.cache) > CACHE_TENSORS:
                    self.cache.popitem(last=False)

    def warm_owned(self, files: list[str]) -> None:
        with open_shards(files) as f:
            for name, t in f.tensors():
                self.cache[name] = t.clone()
                self.cache.move_to_end(name)
                if len(self.cache) > CACHE_TENSORS:
                    self.cache.popitem(last=False)

    def sample_heads(self, files: list[str]) -> None:
        with open_shards(files) as f:
            for name, t in f.tensors():
                self.samples[name] = t.view(-1)[:64]

    def sample_heads_host(self, files: list[str]) -> None:
        with open_shards(files) as f:
            for name, t in f.tensors():
                self.samples[name] = t.view(-1)[:64].cpu()


def preview(files: list[str]) -> list[tuple[str, torch.Tensor]]:
    with open_shards(files) as f:
        head = list(itertools.islice(f.tensors(), PREVIEW))
        return [(n, t.float().norm().reshape(1)) for n, t in head]


def preview_owned(files: list[str]) -> list[tuple[str, torch.Tensor]]:
    with open_shards(files) as f:
        head = [(n, t.clone()) for n, t in itertools.islice(f.tensors(), PREVIEW)]
        return [(n, t.float().norm().reshape(1)) for n, t in head]


def snapshot(files: list[str], out_dir: str, pool: ThreadPoolExecutor) -> None:
    saves: list[Future] = []
    with open_shards(files) as f:
        for name, t in f.tensors():
            saves.append(pool.submit(torch.save, t, f"{out_dir}/{name}.pt"))
        for s in saves:
            s.result()


def snapshot_each(files: list[str], out_dir: str, pool: ThreadPoolExecutor) -> None:
    with open_shards(files) as f:
        for name, t in f.tensors():
            pool.submit(torch.save, t, f"{out_dir}/{name}.pt").result()
