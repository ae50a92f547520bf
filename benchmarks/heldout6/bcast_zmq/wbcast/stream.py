"""The checkpoint as (name, tensor) pairs, read through the RunAI streamer's reused CPU buffer."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer


def stream_checkpoint(files: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    with SafetensorsStreamer() as streamer:
        for path in files:
            streamer.stream_file(path)
            for name, tensor in streamer.get_tensors():
                yield name, tensor
