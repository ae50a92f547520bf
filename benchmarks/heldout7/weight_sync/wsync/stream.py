"""Where the new weights come from: the checkpoint the trainer just wrote, streamed."""

from __future__ import annotations

from typing import Iterator

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def iter_checkpoint(files: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    """Re-yields the streamer's tensors, renaming the trainer's FSDP prefix away."""
    for name, tensor in runai_safetensors_weights_iterator(files):
        yield name.removeprefix("_fsdp_wrapped_module."), tensor
