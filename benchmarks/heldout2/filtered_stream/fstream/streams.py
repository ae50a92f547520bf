"""Composable (name, tensor) stream transforms."""
from __future__ import annotations

import re
from typing import Iterable, Iterator, Tuple

import torch

Weights = Iterable[Tuple[str, torch.Tensor]]

_LAYER = re.compile(r"^model\.layers\.(\d+)\.")
_RENAMES = {
    "model.embed_tokens.weight": "embed.weight",
    "model.norm.weight": "final_norm.weight",
    "lm_head.weight": "head.weight",
}
SKIP = ("rotary_emb.inv_freq", "rotary_emb.cos_cached", "rotary_emb.sin_cached")


def remap_name(name: str) -> str:
    if name in _RENAMES:
        return _RENAMES[name]
    return _LAYER.sub(lambda m: f"blocks.{m.group(1)}.", name)


def remap_weights(weights: Weights) -> Iterator[Tuple[str, torch.Tensor]]:
    for name, w in weights:
        yield remap_name(name), w


def filter_weights(weights: Weights, skip: Tuple[str, ...] = SKIP) -> Iterator[Tuple[str, torch.Tensor]]:
    for name, w in weights:
        if any(s in name for s in skip):
            continue
        yield name, w


def reinterpret(weights: Weights, dtype: torch.dtype) -> Iterator[Tuple[str, torch.Tensor]]:
    """Reinterpret the bytes (fp8 checkpoints stored as uint8), no copy."""
    for name, w in weights:
        yield name, w.view(dtype)


def owned(weights: Weights) -> Iterator[Tuple[str, torch.Tensor]]:
    for name, w in weights:
        yield name, w.clone()
