import re
from typing import Iterator, Tuple

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

_SKIP = re.compile(r"rotary_emb\.inv_freq|\.attn\.bias$")


def checkpoint_stream(files) -> Iterator[Tuple[str, torch.Tensor]]:
    yield from runai_safetensors_weights_iterator(files)


def skip_buffers(weights):
    for name, tensor in weights:
        if _SKIP.search(name):
            continue
        yield name, tensor


def hf_to_internal(weights, prefix: str = "model."):
    for name, tensor in weights:
        if name.startswith(prefix):
            name = name[len(prefix):]
        yield name.replace("self_attn", "attn"), tensor
