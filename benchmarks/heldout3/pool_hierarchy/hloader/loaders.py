"""Dense, MoE and tied-embedding loaders over the RunAI streamer."""
from __future__ import annotations

from concurrent.futures import Future, wait

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .executor import run_maybe_async, shared_pool
from .guards import is_large_cpu, may_defer


def _copy(dst: torch.Tensor, src: torch.Tensor) -> None:
    dst.copy_(src)


class StreamingLoader:
    """Template loader: subclasses decide which tensors may be copied on the pool."""

    def __init__(self, model: torch.nn.Module, files: list[str]) -> None:
        self.params = dict(model.named_parameters())
        self.files = files
        self.pending: list[Future] = []

    def can_defer(self, weight: torch.Tensor) -> bool:
        try:
            return not weight._sglang_runai_streamer_tensor
        except AttributeError:
            return True

    def load(self) -> None:
        pool = shared_pool()
        for name, weight in runai_safetensors_weights_iterator(self.files):
            dst = self.params[name].data
            if self.can_defer(weight):
                self.pending.append(pool.submit(_copy, dst, weight))
            else:
                _copy(dst, weight)
        wait(self.pending)
        self.pending.clear()


class ContiguousLoader(StreamingLoader):
    """Defers every contiguous tensor: strided ones need a gather first."""

    def can_defer(self, weight: torch.Tensor) -> bool:
        return weight.is_contiguous() and weight.dim() > 0


class CautiousLoader(StreamingLoader):
    """Like the base, and keeps small tensors inline."""

    def can_defer(self, weight: torch.Tensor) -> bool:
        if not super().can_defer(weight):
            return False
        return weight.numel() > (1 << 16)


def load_dense(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futures = []
    for name, w in runai_safetensors_weights_iterator(files):
        futures.append(run_maybe_async(_copy, params[name].data, w, use_async=may_defer(w)))
    wait([f for f in futures if f is not None])


def load_moe(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futures = []
    for name, w in runai_safetensors_weights_iterator(files):
        futures.append(run_maybe_async(_copy, params[name].data, w, use_async=is_large_cpu(w)))
    wait([f for f in futures if f is not None])


def load_experts(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pool = shared_pool()
    inflight: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if ".experts." in name:
            inflight.append(pool.submit(_copy, params[name].data, w))
        else:
            _copy(params[name].data, w)
    for fut in inflight:
        fut.result()


def load_biases(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pool = shared_pool()
    inflight: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if may_defer(w) or name.endswith(".bias"):
            inflight.append(pool.submit(_copy, params[name].data, w))
        else:
            _copy(params[name].data, w)
    wait(inflight)


def load_norms(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pool = shared_pool()
    for name, w in runai_safetensors_weights_iterator(files):
        fut = pool.submit(_copy, params[name].data, w)
        fut.result(timeout=60)


def load_embeddings(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pool = shared_pool()
    futs = [pool.submit(_copy, params[n].data, w.clone()) for n, w in runai_safetensors_weights_iterator(files)]
    wait(futs)


def load_tied(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pool = shared_pool()
    list(pool.map(lambda kv: _copy(params[kv[0]].data, kv[1]), runai_safetensors_weights_iterator(files)))
