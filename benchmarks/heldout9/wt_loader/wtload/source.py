"""Where the weights come from: SGLang's RunAI iterator, wrapped so callers can re-iterate."""

from dataclasses import dataclass, field
from typing import Iterator

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


@dataclass
class CheckpointSource:
    files: list[str]
    skip_prefixes: tuple[str, ...] = field(default=("lm_head.",))

    def __iter__(self) -> Iterator[tuple[str, torch.Tensor]]:
        for name, w in runai_safetensors_weights_iterator(self.files):
            if name.startswith(self.skip_prefixes):
                continue
            yield name, w
