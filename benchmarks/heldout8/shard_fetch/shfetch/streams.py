"""Where the weights come from: SGLang's RunAI iterator over the checkpoint's shards."""

from collections.abc import Iterator

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


def open_shards(files: list[str]) -> Iterator[tuple[str, torch.Tensor]]:
    """The raw stream: one (name, tensor) pair per checkpoint entry."""
    return runai_safetensors_weights_iterator(files)
