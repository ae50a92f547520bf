"""Loader skeletons: subclasses decide what happens to each streamed tensor."""

from __future__ import annotations

import concurrent.futures as cf

import torch
from vllm.model_executor.model_loader.weight_utils import runai_safetensors_weights_iterator


class StreamingLoader:
    """Streams a checkpoint and hands each tensor to `on_tensor`."""

    def __init__(self, model: torch.nn.Module, pool: cf.ThreadPoolExecutor) -> None:
        self.params = dict(model.named_parameters())
        self.pool = pool

    def load(self, files: list[str]) -> None:
        for name, tensor in runai_safetensors_weights_iterator(files, False):
            param = self.params.get(name)
            if param is None:
                continue
            self.on_tensor(param, tensor)
        self.finish()

    def on_tensor(self, param: torch.nn.Parameter, tensor: torch.Tensor) -> None:
        with torch.no_grad():
            param.copy_(tensor)

    def finish(self) -> None:
        """Called once the stream is exhausted."""


class StagedLoader:
    """Like StreamingLoader, but every step ends with `settle()`."""

    def __init__(self, model: torch.nn.Module, pool: cf.ThreadPoolExecutor) -> None:
        self.params = dict(model.named_parameters())
        self.pool = pool
        self._inflight: list[cf.Future] = []

    def load(self, files: list[str]) -> None:
        for name, tensor in runai_safetensors_weights_iterator(files, False):
            self.stage(self.params[name], tensor)
            self.settle()

    def stage(self, param: torch.nn.Parameter, tensor: torch.Tensor) -> None:
        self._inflight.append(self.pool.submit(param.data.copy_, tensor))

    def settle(self) -> None:
        while self._inflight:
            self._inflight.pop().result()
