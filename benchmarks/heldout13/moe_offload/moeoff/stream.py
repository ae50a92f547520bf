"""Expert tensors straight from the RunAI Model Streamer (0.16.x: one reused CPU buffer)."""

from __future__ import annotations

import logging
from typing import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer

log = logging.getLogger(__name__)


def iter_expert_tensors(files: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        for name, tensor in streamer.get_tensors():
            log.debug("streamed %s %s", name, tuple(tensor.shape))
            yield name, tensor


def expert_key(name: str) -> tuple[int, int, str]:
    """'model.layers.3.mlp.experts.17.w1.weight' -> (3, 17, 'w1')."""
    parts = name.split(".")
    return int(parts[2]), int(parts[5]), parts[6]
