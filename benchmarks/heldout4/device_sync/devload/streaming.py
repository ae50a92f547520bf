"""Open the RunAI streamer over a list of safetensors files."""

from __future__ import annotations

from contextlib import contextmanager
from typing import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer


@contextmanager
def streamed(files: list[str]) -> Iterator[Iterator[tuple[str, torch.Tensor]]]:
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        yield streamer.get_tensors()
