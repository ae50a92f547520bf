"""Per-policy reload entry points, one per rollout backend we ship."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from rlreload import policies
from rlreload.dispatch import ReloadConfig, Scheduler, copy_param, guarded_by


@guarded_by(policies.defer_walrus)
def copy_walrus(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    copy_param(param, w)


@guarded_by(policies.defer_detached)
def copy_detached(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    copy_param(param, w)


def reload_walrus(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    with ThreadPoolExecutor(8) as pool:
        pending = []
        for name, w in runai_safetensors_weights_iterator(files):
            pending.append(copy_walrus(pool, params[name], w))
        for f in pending:
            if f is not None:
                f.result()


def reload_detached(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    with ThreadPoolExecutor(8) as pool:
        pending = []
        for name, w in runai_safetensors_weights_iterator(files):
            pending.append(copy_detached(pool, params[name], w))
        for f in pending:
            if f is not None:
                f.result()


STATIC = ReloadConfig(defer=policies.defer_static)
STRING_FLAG = ReloadConfig(defer=policies.defer_string_flag)


def _reload_with(cfg: ReloadConfig, model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    with ThreadPoolExecutor(cfg.workers) as pool:
        futures = []
        for name, w in runai_safetensors_weights_iterator(files):
            if cfg.defer(w):
                futures.append(pool.submit(copy_param, params[name], w))
            else:
                copy_param(params[name], w)
        for f in futures:
            f.result()


def reload_static(model: torch.nn.Module, files: list[str]) -> None:
    _reload_with(STATIC, model, files)


def reload_string_flag(model: torch.nn.Module, files: list[str]) -> None:
    _reload_with(STRING_FLAG, model, files)


def reload_in_dir(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    sched = Scheduler()
    for name, w in runai_safetensors_weights_iterator(files):
        sched.schedule(params[name], w, use_async=policies.defer_in_dir(w))
    sched.drain()


def reload_flat(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    sched = Scheduler()
    for name, w in runai_safetensors_weights_iterator(files):
        sched.schedule(params[name], w, use_async=policies.defer_flat(w))
    sched.drain()


async def reload_by_mode(model: torch.nn.Module, files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    params = dict(model.named_parameters())
    tasks = []
    with ThreadPoolExecutor(8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            if policies.defer_by_mode(w):
                tasks.append(loop.run_in_executor(pool, copy_param, params[name], w))
            else:
                copy_param(params[name], w)
        await asyncio.gather(*tasks)


async def reload_unless_env(model: torch.nn.Module, files: list[str]) -> None:
    loop = asyncio.get_running_loop()
    params = dict(model.named_parameters())
    tasks = []
    with ThreadPoolExecutor(8) as pool:
        for name, w in runai_safetensors_weights_iterator(files):
            if not policies.defer_unless_env(w):
                copy_param(params[name], w)
                continue
            tasks.append(loop.run_in_executor(pool, copy_param, params[name], w))
        await asyncio.gather(*tasks)
