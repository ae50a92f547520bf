"""Guarded draft-head loaders: each streams the draft checkpoint with SGLang's RunAI iterator
and overlaps the host copies on a worker pool where its policy allows."""

from __future__ import annotations

import concurrent.futures
from concurrent.futures import Future, ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from specdraft.guards import (
    LoadPlan,
    defer_ok,
    defer_ok_fast,
    may_defer,
    may_defer_frozen,
    should_overlap,
    should_overlap_half,
)
from specdraft.pool import copy_into, maybe_submit


def load_dispatch(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_submit(pool, futures, copy_into, (params[name], w), use_async=defer_ok(w))
    concurrent.futures.wait(futures)


def load_dispatch_fast(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_submit(pool, futures, copy_into, (params[name], w), use_async=defer_ok_fast(w))
    concurrent.futures.wait(futures)


def load_overlap(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if should_overlap(w):
            futures.append(pool.submit(copy_into, params[name], w))
        else:
            copy_into(params[name], w)
    concurrent.futures.wait(futures)


def load_overlap_half(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if should_overlap_half(w):
            futures.append(pool.submit(copy_into, params[name], w))
        else:
            copy_into(params[name], w)
    concurrent.futures.wait(futures)


class PlannedLoader:
    def __init__(self, plan: LoadPlan, pool: ThreadPoolExecutor) -> None:
        self.plan = plan
        self.pool = pool

    def load(self, draft: torch.nn.Module, files: list[str]) -> None:
        params = dict(draft.named_parameters())
        futures: list[Future] = []
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_submit(self.pool, futures, copy_into, (params[name], w), use_async=self.plan.defer(w))
        concurrent.futures.wait(futures)

    def load_lenient(self, draft: torch.nn.Module, files: list[str]) -> None:
        params = dict(draft.named_parameters())
        futures: list[Future] = []
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_submit(self.pool, futures, copy_into, (params[name], w), use_async=self.plan.defer_lenient(w))
        concurrent.futures.wait(futures)


def load_suppress(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if may_defer(w):
            futures.append(pool.submit(copy_into, params[name], w))
            continue
        copy_into(params[name], w)
    concurrent.futures.wait(futures)


def load_suppress_frozen(draft: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(draft.named_parameters())
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if may_defer_frozen(w):
            futures.append(pool.submit(copy_into, params[name], w))
            continue
        copy_into(params[name], w)
    concurrent.futures.wait(futures)
