"""Shard streaming (runai-model-streamer 0.16: tensors are views of the streamer's CPU buffer).

The shards this loader serves are float16 checkpoints.
"""

from __future__ import annotations

import logging
from typing import Iterator

import torch
from runai_model_streamer import SafetensorsStreamer

log = logging.getLogger(__name__)


def stream_shard(path: str) -> Iterator[tuple[str, torch.Tensor]]:
    with SafetensorsStreamer() as streamer:
        streamer.stream_files([path])
        for name, tensor in streamer.get_tensors():
            yield name, tensor
    log.debug("shard %s done", path)
