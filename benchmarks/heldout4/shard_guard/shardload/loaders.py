"""Model loaders over the RunAI-streamed safetensors iterator."""

from __future__ import annotations

import concurrent.futures as cf
from typing import Iterable

import torch
from sglang.srt.model_loader.utils import maybe_executor_submit
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from shardload.copying import copy_param, copy_rows
from shardload.policy import (
    DevicePolicy,
    BulkPolicy,
    LargeTensorPolicy,
    cpu_streamable,
    lent_view_safe,
    may_background,
    offload_ok,
)

_POOL = cf.ThreadPoolExecutor(max_workers=8, thread_name_prefix="shard-copy")


def load_dense(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futures: list[cf.Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_executor_submit(
            executor=_POOL,
            futures=futures,
            use_async=offload_ok(w),
            func=copy_param,
            func_args=(params[name], w),
        )
    cf.wait(futures)


def load_embeddings(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futures: list[cf.Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_executor_submit(executor=_POOL, futures=futures, use_async=may_background(w),
                              func=copy_param, func_args=(params[name], w))
    cf.wait(futures)


def load_norms(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futures: list[cf.Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_executor_submit(executor=_POOL, futures=futures, use_async=True,
                              func=copy_param, func_args=(params[name], w))
    cf.wait(futures)


def load_lm_head(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pending = []
    for name, w in runai_safetensors_weights_iterator(files):
        if cpu_streamable(w):
            pending.append(_POOL.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    cf.wait(pending)


def load_attention(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    pending = []
    for name, w in runai_safetensors_weights_iterator(files):
        if lent_view_safe(w):
            pending.append(_POOL.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    cf.wait(pending)


def load_with_policy(model: torch.nn.Module, files: list[str], policy: DevicePolicy) -> None:
    params = dict(model.named_parameters())
    pending = []
    for name, w in runai_safetensors_weights_iterator(files):
        if policy.allows_async(w):
            pending.append(_POOL.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    cf.wait(pending)


def load_mlp_checked_first(model: torch.nn.Module, files: Iterable[str]) -> None:
    params = dict(model.named_parameters())
    pending = []
    for name, w in runai_safetensors_weights_iterator(list(files)):
        ok = may_background(w)
        if ok:
            pending.append(_POOL.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    cf.wait(pending)


def load_experts(model: torch.nn.Module, files: list[str], rows_per_expert: int) -> None:
    params = dict(model.named_parameters())
    pending = []
    for name, w in runai_safetensors_weights_iterator(files):
        base, _, idx = name.rpartition(".experts.")
        target = params[base + ".experts"]
        start = int(idx.split(".")[0]) * rows_per_expert
        fut = _POOL.submit(copy_rows, target, w, start) if w.device.type == "cpu" else None
        if fut is None:
            copy_rows(target, w, start)
        else:
            pending.append(fut)
    cf.wait(pending)


def load_router(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        fut = _POOL.submit(copy_param, params[name], w)
        fut.result()


def load_all(model: torch.nn.Module, files: list[str]) -> None:
    load_dense(model, files)
    load_embeddings(model, files)
    load_norms(model, files)
    load_lm_head(model, files)
    load_attention(model, files)
    load_with_policy(model, files, BulkPolicy())
    load_with_policy(model, files, LargeTensorPolicy())
    load_mlp_checked_first(model, files)
    load_experts(model, files, rows_per_expert=256)
    load_router(model, files)
