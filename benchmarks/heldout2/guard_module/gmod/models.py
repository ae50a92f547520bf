"""Models whose load_weights pick a policy from gmod.policy."""
from __future__ import annotations

from concurrent.futures import Executor, wait
from typing import Iterable, Tuple

import torch
from sglang.srt.model_loader.utils import should_async_load

from .executor import maybe_submit
from .policy import RUNAI_MARK, can_load_async, can_load_async_fast, dtype_allows_async, passes_all_checks

Weights = Iterable[Tuple[str, torch.Tensor]]


def default_weight_loader(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    with torch.no_grad():
        param.data.copy_(w)


class DenseModel(torch.nn.Module):
    def load_weights(self, weights: Weights, executor: Executor) -> None:
        params = dict(self.named_parameters())
        futures = []
        for name, w in weights:
            maybe_submit(executor, futures, can_load_async(w), default_weight_loader, params[name], w)
        wait(futures)


class FastDenseModel(torch.nn.Module):
    def load_weights(self, weights: Weights, executor: Executor) -> None:
        params = dict(self.named_parameters())
        futures = []
        for name, w in weights:
            maybe_submit(executor, futures, can_load_async_fast(w), default_weight_loader, params[name], w)
        wait(futures)


class QuantModel(torch.nn.Module):
    def load_weights(self, weights: Weights, executor: Executor) -> None:
        params = dict(self.named_parameters())
        futures = []
        for name, w in weights:
            if dtype_allows_async(w):
                futures.append(executor.submit(default_weight_loader, params[name], w))
            else:
                default_weight_loader(params[name], w)
        wait(futures)


class CheckedModel(torch.nn.Module):
    def load_weights(self, weights: Weights, executor: Executor) -> None:
        params = dict(self.named_parameters())
        futures = []
        for name, w in weights:
            maybe_submit(executor, futures, passes_all_checks(w), default_weight_loader, params[name], w)
        wait(futures)


class UpstreamPolicyModel(torch.nn.Module):
    def load_weights(self, weights: Weights, executor: Executor) -> None:
        params = dict(self.named_parameters())
        futures = []
        for name, w in weights:
            maybe_submit(executor, futures, should_async_load(w), default_weight_loader, params[name], w)
        wait(futures)


class BaseMoEModel(torch.nn.Module):
    def may_defer(self, w: torch.Tensor) -> bool:
        if getattr(w, RUNAI_MARK, False):
            return False
        return w.is_cpu

    def load_weights(self, weights: Weights, executor: Executor) -> None:
        params = dict(self.named_parameters())
        futures = []
        for name, w in weights:
            if self.may_defer(w):
                futures.append(executor.submit(default_weight_loader, params[name], w))
            else:
                default_weight_loader(params[name], w)
        wait(futures)


class LargeExpertMoEModel(BaseMoEModel):
    def may_defer(self, w: torch.Tensor) -> bool:
        return w.is_cpu and w.numel() >= 1 << 20
