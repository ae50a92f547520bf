"""Adapter loaders: each streams one adapter's safetensors and copies into the LoRA slots."""

from __future__ import annotations

import functools
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

import torch
from sglang.srt.model_loader.utils import maybe_executor_submit
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from loraswap.policies import (
    BigOnlyPolicy,
    DeferPolicy,
    StrictPolicy,
    defer_all_markers,
    defer_by_dtype,
    defer_dict,
    defer_match,
    defer_not_none,
    defer_walrus,
    defer_wrong_attr,
)


def copy_slot(slot: torch.Tensor, w: torch.Tensor) -> None:
    slot.copy_(w)


class AdapterLoader:
    def __init__(self, policy: DeferPolicy, workers: int = 4) -> None:
        self.policy = policy
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.futures: list[Future] = []

    def load(self, slots: dict[str, torch.Tensor], files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            maybe_executor_submit(
                executor=self.pool,
                futures=self.futures,
                use_async=self.policy.may_defer(w),
                func=copy_slot,
                func_args=(slots[name], w),
            )
        wait(self.futures)
        self.futures.clear()


def load_default(slots: dict[str, torch.Tensor], files: list[str]) -> None:
    AdapterLoader(DeferPolicy()).load(slots, files)


def load_strict(slots: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_executor_submit(executor=pool, futures=futures, use_async=StrictPolicy().may_defer(w), func=copy_slot, func_args=(slots[name], w))
    wait(futures)


def load_big_first(slots: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        maybe_executor_submit(executor=pool, futures=futures, use_async=BigOnlyPolicy().may_defer(w), func=copy_slot, func_args=(slots[name], w))
    wait(futures)


def load_by_functions(slots: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor, mode: str) -> None:
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if mode == "none":
            maybe_executor_submit(executor=pool, futures=futures, use_async=defer_not_none(w), func=copy_slot, func_args=(slots[name], w))
        elif mode == "dict":
            maybe_executor_submit(executor=pool, futures=futures, use_async=defer_dict(w), func=copy_slot, func_args=(slots[name], w))
        elif mode == "legacy":
            maybe_executor_submit(executor=pool, futures=futures, use_async=defer_wrong_attr(w), func=copy_slot, func_args=(slots[name], w))
        elif mode == "walrus":
            maybe_executor_submit(executor=pool, futures=futures, use_async=defer_walrus(w), func=copy_slot, func_args=(slots[name], w))
        elif mode == "dtype":
            maybe_executor_submit(executor=pool, futures=futures, use_async=defer_by_dtype(w), func=copy_slot, func_args=(slots[name], w))
        else:
            maybe_executor_submit(executor=pool, futures=futures, use_async=defer_match(w), func=copy_slot, func_args=(slots[name], w))
    wait(futures)


def load_all_markers(slots: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if defer_all_markers(w):
            futures.append(pool.submit(copy_slot, slots[name], w))
        else:
            copy_slot(slots[name], w)
    wait(futures)


def load_verdict_first(slots: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    futures: list[Future] = []
    for name, w in runai_safetensors_weights_iterator(files):
        ok = defer_match(w)
        if ok:
            futures.append(pool.submit(copy_slot, slots[name], w))
            continue
        copy_slot(slots[name], w)
    wait(futures)


def load_threads(slots: dict[str, torch.Tensor], files: list[str]) -> None:
    workers: list[threading.Thread] = []
    for name, w in runai_safetensors_weights_iterator(files):
        t = threading.Thread(target=copy_slot, args=(slots[name], w), daemon=True)
        t.start()
        workers.append(t)
    for t in workers:
        t.join()


def load_threads_joined(slots: dict[str, torch.Tensor], files: list[str]) -> None:
    for name, w in runai_safetensors_weights_iterator(files):
        t = threading.Thread(target=copy_slot, args=(slots[name], w), daemon=True)
        t.start()
        t.join(timeout=None)


def load_pool_per_tensor(slots: dict[str, torch.Tensor], files: list[str]) -> None:
    for name, w in runai_safetensors_weights_iterator(files):
        with ThreadPoolExecutor(max_workers=1) as one:
            one.submit(copy_slot, slots[name], w)


def load_pool_per_adapter(slots: dict[str, torch.Tensor], files: list[str]) -> None:
    with ThreadPoolExecutor(max_workers=4) as shared:
        for name, w in runai_safetensors_weights_iterator(files):
            shared.submit(copy_slot, slots[name], w)


def load_deferred(slots: dict[str, torch.Tensor], files: list[str]) -> None:
    deferred: list[functools.partial] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if name.endswith("lora_B.weight"):
            deferred.append(functools.partial(copy_slot, slots[name], w))
        else:
            copy_slot(slots[name], w)
    for job in deferred:
        job()


def load_deferred_owned(slots: dict[str, torch.Tensor], files: list[str]) -> None:
    deferred: list[functools.partial] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if name.endswith("lora_B.weight"):
            deferred.append(functools.partial(copy_slot, slots[name], w.clone()))
        else:
            copy_slot(slots[name], w)
    for job in deferred:
        job()
