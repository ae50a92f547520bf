"""Loaders that let a policy decide which weights are copied on the pool."""

from concurrent.futures import Future, ThreadPoolExecutor, wait

import torch

from . import policy
from .overlap import copy_param
from .source import CheckpointSource


def _load_with(model: torch.nn.Module, src: CheckpointSource, pool: ThreadPoolExecutor, decide) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for name, w in src:
        if decide(w):
            futures.append(pool.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    wait(futures)


def load_any_marker(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for name, w in CheckpointSource(files):
        if policy.defer_any_marker(w):
            futures.append(pool.submit(copy_param, params[name], w))
            continue
        copy_param(params[name], w)
    wait(futures)


def load_matched(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    pending = []
    for name, w in CheckpointSource(files):
        if not policy.defer_matched(w):
            copy_param(params[name], w)
            continue
        pending.append(pool.submit(copy_param, params[name], w))
    for fut in pending:
        fut.result()


def load_unshared(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for name, w in CheckpointSource(files):
        futures.append(pool.submit(copy_param, params[name], w)) if policy.defer_unshared(w) else copy_param(params[name], w)
    wait(futures)


def load_cpu_unmarked(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for name, w in CheckpointSource(files):
        if policy.defer_cpu_unmarked(w):
            futures.append(pool.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    wait(futures)


def load_at_base(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    _load_with(model, CheckpointSource(files), pool, policy.defer_at_base)


def load_by_class(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for name, w in CheckpointSource(files):
        if policy.defer_by_class(w):
            futures.append(pool.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    wait(futures)


def load_for_param(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for name, w in CheckpointSource(files):
        param = params[name]
        if policy.defer_for_param(param, w):
            futures.append(pool.submit(copy_param, param, w))
        else:
            copy_param(param, w)
    wait(futures)


def load_cpu_or_unmarked(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futures: list[Future] = []
    for name, w in CheckpointSource(files):
        if policy.defer_cpu_or_unmarked(w):
            futures.append(pool.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    wait(futures)
