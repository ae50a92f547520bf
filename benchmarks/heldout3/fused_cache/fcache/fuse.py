"""Fuse q_a_proj / kv_a_proj_with_mqa pairs while streaming (DeepSeek-style checkpoints)."""
from __future__ import annotations

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .records import LayerStats, PendingPair

_PAIR = ("q_a_proj", "kv_a_proj_with_mqa")


def _partner(name: str) -> str:
    a, b = _PAIR
    return name.replace(a, b) if a in name else name.replace(b, a)


def _fused_name(name: str) -> str:
    return name.replace(_PAIR[1], "fused_qkv_a_proj").replace(_PAIR[0], "fused_qkv_a_proj")


def load_fused(params: dict[str, torch.Tensor], files: list[str]) -> None:
    waiting: dict[str, torch.Tensor] = {}
    for name, w in runai_safetensors_weights_iterator(files):
        if not any(p in name for p in _PAIR):
            params[name].copy_(w)
            continue
        other = waiting.pop(_partner(name), None)
        if other is None:
            waiting[name] = w
            continue
        params[_fused_name(name)].copy_(torch.cat([other, w], dim=0))


def load_fused_owned(params: dict[str, torch.Tensor], files: list[str]) -> None:
    waiting: dict[str, torch.Tensor] = {}
    for name, w in runai_safetensors_weights_iterator(files):
        if not any(p in name for p in _PAIR):
            params[name].copy_(w)
            continue
        other = waiting.pop(_partner(name), None)
        if other is None:
            waiting[name] = w.clone()
            continue
        params[_fused_name(name)].copy_(torch.cat([other, w], dim=0))


def load_fused_records(params: dict[str, torch.Tensor], files: list[str]) -> LayerStats:
    stats = LayerStats()
    halves: list[PendingPair] = []
    for name, w in runai_safetensors_weights_iterator(files):
        stats.names.append(name)
        stats.numel += w.numel()
        if any(p in name for p in _PAIR):
            halves.append(PendingPair(name, w))
        else:
            params[name].copy_(w)
    for a, b in zip(halves[::2], halves[1::2]):
        params[_fused_name(a.name)].copy_(torch.cat([a.tensor, b.tensor], dim=0))
    return stats


def load_fused_records_owned(params: dict[str, torch.Tensor], files: list[str]) -> None:
    halves: list[PendingPair] = []
    for name, w in runai_safetensors_weights_iterator(files):
        if any(p in name for p in _PAIR):
            halves.append(PendingPair(name, w.clone()))
        else:
            params[name].copy_(w)
    for a, b in zip(halves[::2], halves[1::2]):
        params[_fused_name(a.name)].copy_(torch.cat([a.tensor, b.tensor], dim=0))
