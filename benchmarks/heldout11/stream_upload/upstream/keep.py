"""Tensors the loader keeps aside while streaming (for tied and broadcast weights)."""

from __future__ import annotations

import torch

from upstream.source import stream_weights


def keep_broadcast(files: list[str], beams: int) -> dict[str, torch.Tensor]:
    tiled: dict[str, torch.Tensor] = {}
    for name, w in stream_weights(files):
        if name.endswith("rotary_emb.inv_freq"):
            tiled[name] = w.expand(beams, *w.shape)
    return tiled


def keep_broadcast_owned(files: list[str], beams: int) -> dict[str, torch.Tensor]:
    tiled: dict[str, torch.Tensor] = {}
    for name, w in stream_weights(files):
        if name.endswith("rotary_emb.inv_freq"):
            tiled[name] = w.repeat(beams, *([1] * w.dim()))
    return tiled


def keep_rows(files: list[str], dev: torch.device = torch.device("cuda")) -> dict[str, torch.Tensor]:
    rows: dict[str, torch.Tensor] = {}
    for name, w in stream_weights(files):
        if name.endswith("embed_tokens.weight"):
            rows[name] = w.unsqueeze(0)
    return rows


def keep_rows_on_device(files: list[str], dev: torch.device = torch.device("cuda")) -> dict[str, torch.Tensor]:
    rows: dict[str, torch.Tensor] = {}
    for name, w in stream_weights(files):
        if name.endswith("embed_tokens.weight"):
            rows[name] = w.unsqueeze(0).to(dev)
    return rows
