"""Restoring non-parameter state: buffers registered on modules, drift checks, single tensors."""

from __future__ import annotations

import collections

import torch

from ckrest.readers import open_streaming
from ckrest.walk import named_tensors


def attach_buffers(model: torch.nn.Module, files: list[str], device: int) -> None:
    modules = dict(model.named_modules())
    with open_streaming(files, device) as reader:
        for name, t in named_tensors(reader):
            owner, _, leaf = name.rpartition(".")
            if leaf == "inv_freq":
                modules[owner].register_buffer(leaf, t, persistent=False)


def attach_buffers_copied(model: torch.nn.Module, files: list[str], device: int) -> None:
    modules = dict(model.named_modules())
    with open_streaming(files, device) as reader:
        for name, t in named_tensors(reader):
            owner, _, leaf = name.rpartition(".")
            if leaf == "inv_freq":
                modules[owner].register_buffer(leaf, t.clone(), persistent=False)


def max_drift(files: list[str], device: int) -> float:
    """Largest change between consecutive layers' norms (a cheap corruption check)."""
    window: collections.deque[torch.Tensor] = collections.deque(maxlen=2)
    drift = 0.0
    with open_streaming(files, device) as reader:
        for name, t in named_tensors(reader):
            if not name.endswith("input_layernorm.weight"):
                continue
            window.append(t)
            if len(window) == 2:
                drift = max(drift, (window[1] - window[0]).abs().max().item())
    return drift


def max_drift_host(files: list[str], device: int) -> float:
    window: collections.deque[torch.Tensor] = collections.deque(maxlen=2)
    drift = 0.0
    with open_streaming(files, device) as reader:
        for name, t in named_tensors(reader):
            if not name.endswith("input_layernorm.weight"):
                continue
            window.append(t.to("cpu"))
            if len(window) == 2:
                drift = max(drift, (window[1] - window[0]).abs().max().item())
    return drift


def find_tensor(files: list[str], device: int, wanted: str) -> torch.Tensor:
    with open_streaming(files, device) as reader:
        for name, t in named_tensors(reader):
            if name == wanted:
                return t
    raise KeyError(wanted)


def find_tensor_copied(files: list[str], device: int, wanted: str) -> torch.Tensor:
    with open_streaming(files, device) as reader:
        for name, t in named_tensors(reader):
            if name == wanted:
                return t.clone()
    raise KeyError(wanted)
