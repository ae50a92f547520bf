"""The checkpoint stream."""

from __future__ import annotations

from typing import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer


def stream_weights(files: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        for name, tensor in streamer.get_tensors():
            yield name, tensor
