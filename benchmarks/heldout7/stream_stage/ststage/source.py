"""Streams every safetensors file of a checkpoint, one at a time."""

from __future__ import annotations

from typing import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer


def stream_checkpoint(paths: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    with SafetensorsStreamer() as streamer:
        for path in paths:
            streamer.stream_file(path)
            for name, tensor in streamer.get_tensors():
                yield name, tensor
