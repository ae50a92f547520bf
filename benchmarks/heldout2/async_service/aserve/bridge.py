"""Push weights into a model owned by an event loop running in another thread."""
from __future__ import annotations

import asyncio

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator


class LoopBridge:
    def __init__(self, loop: asyncio.AbstractEventLoop, params: dict[str, torch.nn.Parameter]) -> None:
        self.loop = loop
        self.params = params

    async def _apply(self, name: str, src: torch.Tensor) -> None:
        self.params[name].data.copy_(src)

    def push_all(self, files: list[str]) -> None:
        futs = []
        for name, t in runai_safetensors_weights_iterator(files):
            futs.append(asyncio.run_coroutine_threadsafe(self._apply(name, t), self.loop))
        for f in futs:
            f.result()

    def push_all_blocking(self, files: list[str], timeout: float | None = None) -> None:
        for name, t in runai_safetensors_weights_iterator(files):
            asyncio.run_coroutine_threadsafe(self._apply(name, t), self.loop).result(timeout)
