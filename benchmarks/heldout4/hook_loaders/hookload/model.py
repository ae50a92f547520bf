"""Two small models whose parameters carry their own weight loaders."""

from __future__ import annotations

import concurrent.futures as cf
import functools
from typing import Iterable

import torch
from torch import nn

from hookload.attrs import WeightLoader, default_weight_loader, set_weight_attrs


def _deferred_expert_loader(pool: cf.ThreadPoolExecutor, futures: list[cf.Future],
                            param: nn.Parameter, w: torch.Tensor) -> None:
    futures.append(pool.submit(default_weight_loader, param, w))


def _owned_expert_loader(pool: cf.ThreadPoolExecutor, futures: list[cf.Future],
                         param: nn.Parameter, w: torch.Tensor) -> None:
    futures.append(pool.submit(default_weight_loader, param, w.contiguous().clone()))


def make_row_loader(start: int) -> WeightLoader:
    def _load(param: nn.Parameter, w: torch.Tensor) -> None:
        with torch.no_grad():
            param[start : start + w.shape[0]].copy_(w)

    return _load


class TinyMoE(nn.Module):
    def __init__(self, pool: cf.ThreadPoolExecutor) -> None:
        super().__init__()
        self.gate = nn.Parameter(torch.empty(8, 64))
        self.experts = nn.Parameter(torch.empty(8, 64, 64))
        self.norm = nn.Parameter(torch.empty(64))
        self._futures: list[cf.Future] = []
        set_weight_attrs(self.experts, {
            "weight_loader": functools.partial(_deferred_expert_loader, pool, self._futures),
        })
        set_weight_attrs(self.gate, {"weight_loader": make_row_loader(0)})

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        params = dict(self.named_parameters())
        for name, w in weights:
            p = params[name]
            loader = getattr(p, "weight_loader", default_weight_loader)
            loader(p, w)
        cf.wait(self._futures)


class DenseTwin(nn.Module):
    def __init__(self, pool: cf.ThreadPoolExecutor) -> None:
        super().__init__()
        self.proj = nn.Parameter(torch.empty(64, 64))
        self.experts = nn.Parameter(torch.empty(8, 64, 64))
        self._futures: list[cf.Future] = []
        set_weight_attrs(self.experts, {
            "weight_loader": functools.partial(_owned_expert_loader, pool, self._futures),
        })
        set_weight_attrs(self.proj, {"weight_loader": make_row_loader(0)})

    def load_weights(self, weights: Iterable[tuple[str, torch.Tensor]]) -> None:
        params_dict = dict(self.named_parameters())
        for name, loaded in weights:
            param = params_dict[name]
            weight_loader = getattr(param, "weight_loader", default_weight_loader)
            weight_loader(param, loaded)
        cf.wait(self._futures)
