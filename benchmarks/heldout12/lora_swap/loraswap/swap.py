"""Adapter swap paths: each streams an adapter and copies it into the live LoRA slots."""

from __future__ import annotations

import logging
from concurrent.futures import Future, ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from loraswap import guards
from loraswap.executors import Dispatcher

log = logging.getLogger(__name__)


def load_into(param: torch.Tensor, w: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(w)


def _run_inline(fn, *args) -> Future:
    fut: Future = Future()
    fut.set_result(fn(*args))
    return fut


class AdapterSwapper:
    def __init__(self, slots: dict[str, torch.Tensor], workers: int = 4) -> None:
        self.slots = slots
        self.pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="lora-copy")
        self.dispatcher = Dispatcher(self.pool)

    def swap_attrgetter(self, files: list[str]) -> None:
        params = self.slots
        for name, w in runai_safetensors_weights_iterator(files):
            self.dispatcher.dispatch(load_into, params[name], w, defer=guards.offload_attrgetter(w))
        self.dispatcher.drain()

    def swap_superset(self, files: list[str]) -> None:
        params, futs = self.slots, []
        for name, w in runai_safetensors_weights_iterator(files):
            if guards.offload_keys_superset(w) is True:
                futs.append(self.pool.submit(load_into, params[name], w))
            else:
                load_into(params[name], w)
        for fut in futs:
            fut.result()

    def swap_checks(self, files: list[str]) -> None:
        params, futs = self.slots, []
        for name, w in runai_safetensors_weights_iterator(files):
            submit_or_run = self.pool.submit if guards.offload_all_checks(w) else _run_inline
            futs.append(submit_or_run(load_into, params[name], w))
        for fut in futs:
            fut.result()

    def swap_isinstance(self, files: list[str]) -> None:
        params, futs = self.slots, []
        for name, w in runai_safetensors_weights_iterator(files):
            if name.endswith(".lora_magnitude"):
                load_into(params[name], w)
            elif guards.offload_isinstance(w):
                futs.append(self.pool.submit(load_into, params[name], w))
            else:
                load_into(params[name], w)
        for fut in futs:
            fut.result()

    def swap_fp32(self, files: list[str]) -> None:
        params = self.slots
        for name, w in runai_safetensors_weights_iterator(files):
            self.dispatcher.dispatch(load_into, params[name], w, defer=guards.offload_fp32_fastpath(w))
        self.dispatcher.drain()

    def swap_upper(self, files: list[str]) -> None:
        params, futs = self.slots, []
        for name, w in runai_safetensors_weights_iterator(files):
            if guards.offload_marker_upper(w) is True:
                futs.append(self.pool.submit(load_into, params[name], w))
            else:
                load_into(params[name], w)
        for fut in futs:
            fut.result()

    def swap_ellipsis(self, files: list[str]) -> None:
        params, futs = self.slots, []
        for name, w in runai_safetensors_weights_iterator(files):
            submit_or_run = self.pool.submit if guards.offload_ellipsis_view(w) else _run_inline
            futs.append(submit_or_run(load_into, params[name], w))
        for fut in futs:
            fut.result()

    def swap_large(self, files: list[str]) -> None:
        params, futs = self.slots, []
        for name, w in runai_safetensors_weights_iterator(files):
            if name.endswith(".lora_magnitude"):
                load_into(params[name], w)
            elif guards.offload_large(w):
                futs.append(self.pool.submit(load_into, params[name], w))
            else:
                load_into(params[name], w)
        for fut in futs:
            fut.result()
        log.info("adapter swapped: %d tensors", len(params))
