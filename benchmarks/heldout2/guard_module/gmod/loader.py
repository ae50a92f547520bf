"""Pick the model class for an architecture and stream its checkpoint into it."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from . import models

ARCHITECTURES = {
    "DenseForCausalLM": models.DenseModel,
    "FastDenseForCausalLM": models.FastDenseModel,
    "QuantForCausalLM": models.QuantModel,
    "CheckedForCausalLM": models.CheckedModel,
    "UpstreamForCausalLM": models.UpstreamPolicyModel,
    "MoEForCausalLM": models.BaseMoEModel,
    "LargeMoEForCausalLM": models.LargeExpertMoEModel,
}


def load(arch: str, files: list[str], num_threads: int = 8):
    model = ARCHITECTURES[arch]()
    with ThreadPoolExecutor(num_threads) as executor:
        model.load_weights(runai_safetensors_weights_iterator(files), executor)
    return model
