"""One place that opens the RunAI streamer (CPU buffer, reused as tensors are handed out)."""

from contextlib import contextmanager
from typing import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer


@contextmanager
def streamed(files: list[str]) -> Iterator[Iterator[tuple[str, torch.Tensor]]]:
    with SafetensorsStreamer() as streamer:
        streamer.stream_files(files)
        yield streamer.get_tensors()
