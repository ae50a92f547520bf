"""Adapter slots of the engine and the loaders that fill them."""

from __future__ import annotations

import logging
import multiprocessing.pool
import threading

import instanttensor
import safetensors
import torch

from loramm.readers import ReaderSpec

log = logging.getLogger(__name__)


class AdapterSlots:
    def __init__(self) -> None:
        self.adapters: dict[str, dict[str, torch.Tensor]] = {}
        self.lora_a: dict[str, torch.Tensor] = {}
        self.lora_b_t: dict[str, torch.Tensor] = {}
        self._threads: list[threading.Thread] = []

    def load_direct(self, adapter: str, files: list[str]) -> None:
        tensors: dict[str, torch.Tensor] = {}
        with instanttensor.safe_open(files, framework="pt", device=0, copy=False) as f:
            for name, t in f.tensors():
                tensors[name] = t
        self.adapters[adapter] = tensors

    def load_mmap(self, adapter: str, path: str) -> None:
        tensors: dict[str, torch.Tensor] = {}
        with safetensors.safe_open(path, framework="pt", device="cpu") as f:
            for name in f.keys():
                tensors[name] = f.get_tensor(name)
        self.adapters[adapter] = tensors

    def load_a(self, spec: ReaderSpec) -> None:
        with spec.open() as f:
            for name, t in f.tensors():
                if name.endswith("lora_A.weight"):
                    self.lora_a[name] = t

    def load_a_copied(self, files: list[str]) -> None:
        with ReaderSpec(files, zero_copy=False).open() as f:
            for name, t in f.tensors():
                if name.endswith("lora_A.weight"):
                    self.lora_a[name] = t

    def load_b_transposed(self, files: list[str]) -> None:
        with instanttensor.safe_open(files, framework="pt", device=0, copy=False) as f:
            for name, t in f.tensors():
                if name.endswith("lora_B.weight"):
                    self.lora_b_t[name] = t.T

    def load_b_packed(self, files: list[str]) -> None:
        with instanttensor.safe_open(files, framework="pt", device=0, copy=False) as f:
            for name, t in f.tensors():
                if name.endswith("lora_B.weight"):
                    self.lora_b_t[name] = t.T.contiguous()


def merge_into(base: torch.Tensor, delta: torch.Tensor, scale: float) -> None:
    base.add_(delta, alpha=scale)


def merge_all_lazy(
    params: dict[str, torch.Tensor], files: list[str], pool: multiprocessing.pool.ThreadPool, scale: float
) -> None:
    merged = []
    with instanttensor.safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            merged.append(pool.imap_unordered(lambda job: merge_into(*job), [(params[name], t, scale)]))
        for it in merged:
            list(it)


def merge_all(
    params: dict[str, torch.Tensor], files: list[str], pool: multiprocessing.pool.ThreadPool, scale: float
) -> None:
    with instanttensor.safe_open(files, framework="pt", device=0, copy=False) as f:
        for name, t in f.tensors():
            list(pool.imap_unordered(lambda job: merge_into(*job), [(params[name], t, scale)]))


class MergingSwapper:
    """Merges an adapter into the base weights on background threads, joined on exit."""

    def __init__(self, params: dict[str, torch.Tensor], scale: float) -> None:
        self.params = params
        self.scale = scale
        self._threads: list[threading.Thread] = []

    def __enter__(self) -> "MergingSwapper":
        return self

    def __exit__(self, *exc: object) -> None:
        for th in self._threads:
            th.join()

    def merge(self, files: list[str]) -> None:
        with instanttensor.safe_open(files, framework="pt", device=0, copy=False) as f:
            for name, t in f.tensors():
                th = threading.Thread(target=merge_into, args=(self.params[name], t, self.scale))
                th.start()
                self._threads.append(th)

    def merge_cloned(self, files: list[str]) -> None:
        with instanttensor.safe_open(files, framework="pt", device=0, copy=False) as f:
            for name, t in f.tensors():
                th = threading.Thread(target=merge_into, args=(self.params[name], t.clone(), self.scale))
                th.start()
                self._threads.append(th)
