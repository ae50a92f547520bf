"""Each method reloads the actor's weights with a different gate; all wait at the end."""

from __future__ import annotations

import concurrent.futures
from concurrent.futures import ThreadPoolExecutor

import torch

from wsync.gates import (OverlapGate, StrictGate, overlap_ok_any, overlap_ok_eafp,
                         overlap_ok_in_tuple, overlap_ok_pinned, overlap_ok_small_first,
                         overlap_ok_vars)
from wsync.pool import copy_param, run_maybe_async
from wsync.stream import iter_checkpoint


class WeightSyncer:
    def __init__(self, model: torch.nn.Module, workers: int = 8) -> None:
        self.params = dict(model.named_parameters())
        self.pool = ThreadPoolExecutor(max_workers=workers)

    def sync_eafp(self, files: list[str]) -> None:
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            run_maybe_async(self.pool, futures, overlap_ok_eafp(w), copy_param, self.params[name], w)
        concurrent.futures.wait(futures)

    def sync_small_first(self, files: list[str]) -> None:
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            run_maybe_async(self.pool, futures, overlap_ok_small_first(w), copy_param, self.params[name], w)
        concurrent.futures.wait(futures)

    def sync_any(self, files: list[str]) -> None:
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            run_maybe_async(self.pool, futures, overlap_ok_any(w), copy_param, self.params[name], w)
        concurrent.futures.wait(futures)

    def sync_pinned(self, files: list[str]) -> None:
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            run_maybe_async(self.pool, futures, overlap_ok_pinned(w), copy_param, self.params[name], w)
        concurrent.futures.wait(futures)

    def sync_in_tuple(self, files: list[str]) -> None:
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            if overlap_ok_in_tuple(w):
                futures.append(self.pool.submit(copy_param, self.params[name], w))
            else:
                copy_param(self.params[name], w)
        concurrent.futures.wait(futures)

    def sync_vars(self, files: list[str]) -> None:
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            run_maybe_async(self.pool, futures, overlap_ok_vars(w), copy_param, self.params[name], w)
        concurrent.futures.wait(futures)

    def sync_gate(self, files: list[str]) -> None:
        gate = OverlapGate()
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            run_maybe_async(self.pool, futures, gate(w), copy_param, self.params[name], w)
        concurrent.futures.wait(futures)

    def sync_strict_gate(self, files: list[str]) -> None:
        gate = StrictGate()
        futures: list[concurrent.futures.Future] = []
        for name, w in iter_checkpoint(files):
            run_maybe_async(self.pool, futures, gate(w), copy_param, self.params[name], w)
        concurrent.futures.wait(futures)
