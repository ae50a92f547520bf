"""Load the index's projection weights through a visitor over the RunAI stream."""
from __future__ import annotations

from concurrent.futures import Future, ThreadPoolExecutor, wait
from typing import Callable

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

Visitor = Callable[[str, torch.Tensor], None]


def visit_weights(files: list[str], fn: Visitor) -> None:
    for name, w in runai_safetensors_weights_iterator(files):
        fn(name, w)


def load_parallel(params: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    futs: list[Future] = []
    visit_weights(files, lambda n, w: futs.append(pool.submit(params[n].copy_, w)))
    wait(futs)


def load_inline(params: dict[str, torch.Tensor], files: list[str]) -> None:
    visit_weights(files, lambda n, w: params[n].copy_(w))


def load_guarded(params: dict[str, torch.Tensor], files: list[str], pool: ThreadPoolExecutor) -> None:
    futs: list[Future] = []

    def handle(n: str, w: torch.Tensor) -> None:
        if getattr(w, "_sglang_runai_streamer_tensor", False):
            params[n].copy_(w)
            return
        futs.append(pool.submit(params[n].copy_, w))

    visit_weights(files, handle)
    wait(futs)


def collect_norms(files: list[str]) -> dict[str, torch.Tensor]:
    kept: dict[str, torch.Tensor] = {}

    def keep_norm(n: str, w: torch.Tensor) -> None:
        if "norm" in n:
            kept[n] = w

    visit_weights(files, keep_norm)
    return kept
