"""Tensor-parallel loader: every rank copies its slice of each weight."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor, wait

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .guards import may_defer, may_defer_shard


def copy_into(param: torch.nn.Parameter, shard: torch.Tensor) -> None:
    with torch.no_grad():
        param.data.copy_(shard)


class ShardedLoader:
    def __init__(self, model: torch.nn.Module, tp_rank: int, tp_size: int, pool: ThreadPoolExecutor) -> None:
        self.params = dict(model.named_parameters())
        self.tp_rank = tp_rank
        self.tp_size = tp_size
        self.pool = pool

    def _rows(self, w: torch.Tensor) -> torch.Tensor:
        size = w.shape[0] // self.tp_size
        return w.narrow(0, self.tp_rank * size, size)

    def load_rows(self, files: list[str]) -> None:
        futs = []
        for name, w in runai_safetensors_weights_iterator(files):
            shard = self._rows(w)
            if may_defer(shard):
                futs.append(self.pool.submit(copy_into, self.params[name], shard))
            else:
                copy_into(self.params[name], shard)
        wait(futs)

    def load_rows_checked(self, files: list[str]) -> None:
        futs = []
        for name, w in runai_safetensors_weights_iterator(files):
            shard = self._rows(w)
            if may_defer_shard(shard):
                futs.append(self.pool.submit(copy_into, self.params[name], shard))
            else:
                copy_into(self.params[name], shard)
        wait(futs)

    def load_rows_guard_first(self, files: list[str]) -> None:
        futs = []
        for name, w in runai_safetensors_weights_iterator(files):
            if may_defer(w):
                futs.append(self.pool.submit(copy_into, self.params[name], self._rows(w)))
            else:
                copy_into(self.params[name], self._rows(w))
        wait(futs)

    def load_cols(self, files: list[str]) -> None:
        futs = []
        for name, w in runai_safetensors_weights_iterator(files):
            cols = w.shape[1] // self.tp_size
            shard = w[:, self.tp_rank * cols:(self.tp_rank + 1) * cols]
            futs.append(self.pool.submit(copy_into, self.params[name], shard))
        wait(futs)

    def load_rows_contiguous(self, files: list[str]) -> None:
        futs = []
        for name, w in runai_safetensors_weights_iterator(files):
            futs.append(self.pool.submit(copy_into, self.params[name], self._rows(w).contiguous()))
        wait(futs)

    def load_experts(self, files: list[str], experts: list[torch.nn.Parameter]) -> None:
        futs = []
        for name, w in runai_safetensors_weights_iterator(files):
            if not name.endswith("experts.weight"):
                copy_into(self.params[name], w)
                continue
            for e, expert_w in enumerate(w.unbind(0)):
                futs.append(self.pool.submit(copy_into, experts[e], expert_w.clone()))
        wait(futs)
