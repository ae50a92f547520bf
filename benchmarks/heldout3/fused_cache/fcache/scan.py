"""Look-ahead and stacking helpers used by the MoE loader."""
from __future__ import annotations

import torch
from instanttensor import safe_open
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def sorted_by_layer(files: list[str]) -> list[tuple[str, torch.Tensor]]:
    everything = list(runai_safetensors_weights_iterator(files))
    return sorted(everything, key=lambda kv: kv[0])


def sorted_by_layer_owned(files: list[str]) -> list[tuple[str, torch.Tensor]]:
    everything = [(n, w.clone()) for n, w in runai_safetensors_weights_iterator(files)]
    return sorted(everything, key=lambda kv: kv[0])


def stack_experts(files: list[str], num_experts: int, shape: tuple[int, int]) -> torch.Tensor:
    stacked = torch.empty((num_experts, *shape))
    for name, w in runai_safetensors_weights_iterator(files):
        idx = int(name.split(".experts.")[1].split(".")[0])
        stacked[idx] = w
    return stacked


def last_layer_norm(files: list[str]) -> torch.Tensor | None:
    last = None
    for name, w in runai_safetensors_weights_iterator(files):
        if name.endswith("input_layernorm.weight"):
            last = w
    return last


def diff_consecutive(files: list[str]) -> list[float]:
    deltas: list[float] = []
    prev = None
    for _name, w in runai_safetensors_weights_iterator(files):
        if prev is not None and prev.shape == w.shape:
            deltas.append(float((w - prev).abs().max()))
        prev = w.clone()
    return deltas


class InstantCache:
    """Keeps every tensor of a small adapter checkpoint on the GPU for fast swaps."""

    def __init__(self, files: list[str]) -> None:
        self.files = files
        self.tensors: dict[str, torch.Tensor] = {}

    def fill_zero_copy(self) -> None:
        with safe_open(self.files, framework="pt", device=0, copy=False) as f:
            for name, tensor in f.tensors():
                self.tensors[name] = tensor

    def fill_owned(self) -> None:
        with safe_open(self.files, framework="pt", device=0, copy=True) as f:
            for key, owned in f.tensors():
                self.tensors[key] = owned
