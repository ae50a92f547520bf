"""Loader that composes the stream transforms and copies on a worker pool."""
from __future__ import annotations

from concurrent.futures import Executor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .streams import filter_weights, owned, reinterpret, remap_name, remap_weights


class FilteredLoader:
    def __init__(self, model: torch.nn.Module, executor: Executor) -> None:
        self.params = dict(model.named_parameters())
        self.executor = executor

    def _load(self, name: str, t: torch.Tensor) -> None:
        self.params[name].data.copy_(t)

    def load(self, files: list[str]) -> None:
        stream = filter_weights(remap_weights(runai_safetensors_weights_iterator(files)))
        futs = []
        for name, t in stream:
            futs.append(self.executor.submit(self._load, name, t))
        for f in futs:
            f.result()

    def load_owned(self, files: list[str]) -> None:
        for name, t in owned(filter_weights(runai_safetensors_weights_iterator(files))):
            self.executor.submit(self._load, remap_name(name), t)

    def load_fp8(self, files: list[str]) -> None:
        for name, t in reinterpret(filter_weights(runai_safetensors_weights_iterator(files)), torch.uint8):
            self.executor.submit(self._load, remap_name(name), t)

    def load_until(self, files: list[str], stop_at: str) -> None:
        for name, t in filter_weights(remap_weights(runai_safetensors_weights_iterator(files))):
            if name == stop_at:
                return
            self.executor.submit(self._load, name, t)

    def load_until_blocking(self, files: list[str], stop_at: str) -> None:
        for name, t in filter_weights(remap_weights(runai_safetensors_weights_iterator(files))):
            fut = self.executor.submit(self._load, name, t)
            fut.result()
            if name == stop_at:
                return
