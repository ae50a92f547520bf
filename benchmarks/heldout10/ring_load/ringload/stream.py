"""The streamer's tensors: views of its reused (pinned) CPU buffer, valid until the next one."""

from __future__ import annotations

from typing import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer


def stream_shards(files: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        for name, tensor in streamer.get_tensors():
            yield name, tensor
