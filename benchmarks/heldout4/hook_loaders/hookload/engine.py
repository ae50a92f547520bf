"""Entry points the serving engine calls at start-up."""

from __future__ import annotations

import concurrent.futures as cf

import torch
from vllm.model_executor.model_loader.weight_utils import runai_safetensors_weights_iterator

from hookload.model import DenseTwin, TinyMoE
from hookload.variants import (
    BackgroundLoader,
    CloningStagedLoader,
    NarrowingStagedLoader,
    SafeTiedEmbeddingLoader,
    TiedEmbeddingLoader,
)


def start(files: list[str], rank: int, world: int) -> list[torch.nn.Module]:
    pool = cf.ThreadPoolExecutor(max_workers=4)
    moe = TinyMoE(pool)
    moe.load_weights(runai_safetensors_weights_iterator(files, False))
    dense = DenseTwin(pool)
    dense.load_weights(runai_safetensors_weights_iterator(files, False))
    BackgroundLoader(moe, pool).load(files)
    NarrowingStagedLoader(dense, pool, rank, world).load(files)
    CloningStagedLoader(dense, pool).load(files)
    TiedEmbeddingLoader(moe, pool).load(files)
    SafeTiedEmbeddingLoader(dense, pool).load(files)
    return [moe, dense]
