"""Concrete loaders used by the engine."""

from __future__ import annotations

import concurrent.futures as cf

import torch

from hookload.base import StagedLoader, StreamingLoader


class BackgroundLoader(StreamingLoader):
    """Overlaps parameter writes with reading the next shard."""

    def __init__(self, model: torch.nn.Module, pool: cf.ThreadPoolExecutor) -> None:
        super().__init__(model, pool)
        self._pending: list[cf.Future] = []

    def on_tensor(self, param: torch.nn.Parameter, tensor: torch.Tensor) -> None:
        self._pending.append(self.pool.submit(param.data.copy_, tensor))

    def finish(self) -> None:
        cf.wait(self._pending)
        self._pending.clear()


class NarrowingStagedLoader(StagedLoader):
    """Tensor-parallel shard: only this rank's rows."""

    def __init__(self, model: torch.nn.Module, pool: cf.ThreadPoolExecutor, rank: int, world: int) -> None:
        super().__init__(model, pool)
        self.rank, self.world = rank, world

    def stage(self, param: torch.nn.Parameter, tensor: torch.Tensor) -> None:
        rows = tensor.shape[0] // self.world
        part = tensor.narrow(0, self.rank * rows, rows)
        super().stage(param, part)


class CloningStagedLoader(StagedLoader):
    def stage(self, param: torch.nn.Parameter, tensor: torch.Tensor) -> None:
        self._inflight.append(self.pool.submit(param.data.copy_, tensor.clone()))


class TiedEmbeddingLoader(StreamingLoader):
    """Remembers the embedding so the tied lm_head can be filled at the end."""

    def __init__(self, model: torch.nn.Module, pool: cf.ThreadPoolExecutor) -> None:
        super().__init__(model, pool)
        self._tied: dict[str, torch.Tensor] = {}

    def on_tensor(self, param: torch.nn.Parameter, tensor: torch.Tensor) -> None:
        super().on_tensor(param, tensor)
        if param.ndim == 2 and param.shape[0] > 32_000:
            self._tied["embed"] = tensor

    def finish(self) -> None:
        head = self.params.get("lm_head.weight")
        if head is not None and "embed" in self._tied:
            with torch.no_grad():
                head.copy_(self._tied["embed"])


class SafeTiedEmbeddingLoader(StreamingLoader):
    def __init__(self, model: torch.nn.Module, pool: cf.ThreadPoolExecutor) -> None:
        super().__init__(model, pool)
        self._embed: torch.Tensor | None = None

    def on_tensor(self, param: torch.nn.Parameter, tensor: torch.Tensor) -> None:
        super().on_tensor(param, tensor)
        if param.ndim == 2 and param.shape[0] > 32_000:
            self._embed = param.detach()

    def finish(self) -> None:
        head = self.params.get("lm_head.weight")
        if head is not None and self._embed is not None:
            with torch.no_grad():
                head.copy_(self._embed)
