"""The checkpoint stream: the RunAI Model Streamer over every file of the checkpoint."""

from __future__ import annotations

from collections.abc import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer


def stream_checkpoint(paths: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    with SafetensorsStreamer() as streamer:
        for path in paths:
            streamer.stream_file(path)
            yield from streamer.get_tensors()
