"""Model loaders: each picks a gate, the copy runs inline or on the pool."""

from __future__ import annotations

import concurrent.futures as cf
import functools

import torch
from sglang.srt.model_loader.utils import maybe_executor_submit, should_async_load
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from gateload import gates
from gateload.gates import GatePolicy, defer_by_pattern, defer_eafp, defer_ok
from gateload.submit import run_now, run_or_defer


def copy_weight(param: torch.nn.Parameter, weight: torch.Tensor) -> None:
    param.data.copy_(weight)


def load_dense(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futs: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_executor_submit(executor=pool, futures=futs, use_async=defer_ok(w), func=copy_weight, func_args=(params[name], w))
        cf.wait(futs)


def load_moe(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futs: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            if ".experts." not in name:
                copy_weight(params[name], w)
                continue
            maybe_executor_submit(executor=pool, futures=futs, use_async=defer_by_pattern(w), func=copy_weight, func_args=(params[name], w))
        cf.wait(futs)


def load_with_stock_gate(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futs: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_executor_submit(executor=pool, futures=futs, use_async=should_async_load(w), func=copy_weight, func_args=(params[name], w))
        cf.wait(futs)


def load_eafp(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pending: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            later = defer_eafp(w)
            run_or_defer(pool, pending, later, copy_weight, params[name], w)
        cf.wait(pending)


def load_embeddings(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pending: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=4) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            if gates.defer_small_first(w):
                pending.append(pool.submit(copy_weight, params[name], w))
            else:
                copy_weight(params[name], w)
        cf.wait(pending)


def load_half(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futs: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_executor_submit(executor=pool, futures=futs, use_async=gates.defer_half_only(w), func=copy_weight, func_args=(params[name], w))
        cf.wait(futs)


def load_vars(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futs: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_executor_submit(executor=pool, futures=futs, use_async=gates.defer_vars(w), func=copy_weight, func_args=(params[name], w))
        cf.wait(futs)


def load_pinned_aware(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futs: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            if gates.defer_unpinned(w):
                futs.append(pool.submit(copy_weight, params[name], w))
            else:
                copy_weight(params[name], w)
        cf.wait(futs)


def load_policy(model: torch.nn.Module, files: list[str], policy: type[GatePolicy] = GatePolicy) -> None:
    params = dict(model.named_parameters())
    futs: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_executor_submit(executor=pool, futures=futs, use_async=policy.admits(w), func=copy_weight, func_args=(params[name], w))
        cf.wait(futs)


def load_all_deferred(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pending: list[cf.Future] = []
    with cf.ThreadPoolExecutor(max_workers=8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            run_or_defer(pool, pending, True, copy_weight, params[name], w)
        cf.wait(pending)


def load_partials(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    with cf.ThreadPoolExecutor(max_workers=2) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            run_now(pool, functools.partial(copy_weight, params[name]), w)
