"""Reload paths, one per policy (each trainer backend picked its own over time)."""

from __future__ import annotations

import concurrent.futures
from concurrent.futures import Future, ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from wsync import policies
from wsync.pool import copy_param, maybe_submit, run_inline, run_pooled


def reload_vars(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_submit(pool, futs, copy_param, params[name], w, use_async=policies.defer_vars(w))
    concurrent.futures.wait(futs)


def reload_storage(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_submit(pool, futs, copy_param, params[name], w, use_async=policies.defer_storage(w))
    concurrent.futures.wait(futs)


def reload_eq_one(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        match policies.defer_eq_one(w):
            case True:
                futs.append(pool.submit(copy_param, params[name], w))
            case _:
                copy_param(params[name], w)
    concurrent.futures.wait(futs)


def reload_big_checked(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        match policies.defer_big_checked(w):
            case True:
                futs.append(pool.submit(copy_param, params[name], w))
            case _:
                copy_param(params[name], w)
    concurrent.futures.wait(futs)


def reload_concat(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    gate = policies.ConcatPolicy()
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if gate(w):
            futs.append(pool.submit(copy_param, params[name], w))
        else:
            copy_param(params[name], w)
    concurrent.futures.wait(futs)


def reload_cuda_marked(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if not policies.defer_cuda_marked(w):
            copy_param(params[name], w)
            continue
        futs.append(pool.submit(copy_param, params[name], w))
    concurrent.futures.wait(futs)


def reload_set_and(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if not policies.defer_set_and(w):
            copy_param(params[name], w)
            continue
        futs.append(pool.submit(copy_param, params[name], w))
    concurrent.futures.wait(futs)


def reload_by_dtype(model: torch.nn.Module, files: list[str], pool: ThreadPoolExecutor) -> None:
    params = dict(model.named_parameters())
    futs: list[Future] = []
    placement = {True: run_pooled, False: run_inline}
    for name, w in runai_safetensors_weights_iterator(files):
        placement[policies.defer_by_dtype(w)](pool, futs, params[name], w)
    concurrent.futures.wait(futs)
