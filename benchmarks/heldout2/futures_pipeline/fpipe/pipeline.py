"""Load strategies built on concurrent.futures combinators."""
from __future__ import annotations

import itertools
from concurrent.futures import ThreadPoolExecutor, as_completed, wait
from typing import Sequence

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

QKV_PARTS = ("q_proj", "k_proj", "v_proj")


def load_one(param: torch.nn.Parameter, tensor: torch.Tensor) -> torch.nn.Parameter:
    with torch.no_grad():
        param.data.copy_(tensor)
    return param


def submit_all(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> int:
    params = dict(model.named_parameters())
    it = runai_safetensors_weights_iterator(files)
    futs = list(map(lambda kv: pool.submit(load_one, params[kv[0]], kv[1]), it))
    for fut in as_completed(futs):
        fut.result()
    return len(futs)


def submit_by_name(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> list[str]:
    params = dict(model.named_parameters())
    by_future = {pool.submit(load_one, params[n], w): n for n, w in runai_safetensors_weights_iterator(files)}
    failed = []
    for fut in as_completed(by_future):
        if fut.exception() is not None:
            failed.append(by_future[fut])
    return failed


def load_prefix(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor, limit: int) -> None:
    params = dict(model.named_parameters())
    for name, w in itertools.islice(runai_safetensors_weights_iterator(files), limit):
        fut = pool.submit(load_one, params[name], w)
        fut.result()


def load_zipped(ordered: Sequence[torch.nn.Parameter], files: list[str], pool: ThreadPoolExecutor) -> None:
    futs = []
    for param, (name, w) in zip(ordered, runai_safetensors_weights_iterator(files)):
        futs.append(pool.submit(load_one, param, w))
    wait(futs)


def load_qkv(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    """Split fused qkv weights; the three parts are copied in parallel, then joined."""
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        if name.endswith("qkv_proj.weight"):
            parts = w.chunk(3, dim=0)
            futs = [pool.submit(load_one, params[name.replace("qkv_proj", p)], part) for p, part in zip(QKV_PARTS, parts)]
            wait(futs)
        else:
            load_one(params[name], w)


def load_qkv_overlapped(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    """Like load_qkv, but the parts' copies overlap with streaming the next tensors."""
    params = dict(model.named_parameters())
    pending = []
    for name, w in runai_safetensors_weights_iterator(files):
        if not name.endswith("qkv_proj.weight"):
            load_one(params[name], w)
            continue
        for p, part in zip(QKV_PARTS, w.chunk(3, dim=0)):
            pending.append(pool.submit(load_one, params[name.replace("qkv_proj", p)], part))
    for fut in as_completed(pending):
        fut.result()
