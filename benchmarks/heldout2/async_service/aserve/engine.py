"""Weight loading for an asyncio model server (hot reload without blocking the event loop)."""
from __future__ import annotations

import asyncio
import functools
from concurrent.futures import ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .naming import hf_to_local

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="reload")


def _install(dst: torch.Tensor, src: torch.Tensor) -> None:
    with torch.no_grad():
        dst.copy_(src)


class AsyncWeightService:
    def __init__(self, model: torch.nn.Module) -> None:
        self.model = model
        self.params = dict(model.named_parameters())

    def _dst(self, name: str) -> torch.Tensor:
        return self.params[hf_to_local(name)].data

    async def load_sequential(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        for name, tensor in runai_safetensors_weights_iterator(files):
            await loop.run_in_executor(_POOL, _install, self._dst(name), tensor)

    async def load_overlapped(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        pending = []
        for name, tensor in runai_safetensors_weights_iterator(files):
            pending.append(loop.run_in_executor(None, functools.partial(_install, self._dst(name), tensor)))
        await asyncio.gather(*pending)

    async def load_to_thread(self, files: list[str]) -> None:
        coros = []
        for name, tensor in runai_safetensors_weights_iterator(files):
            coros.append(asyncio.to_thread(_install, self._dst(name), tensor))
        await asyncio.gather(*coros)

    async def load_waited(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        for name, tensor in runai_safetensors_weights_iterator(files):
            fut = loop.run_in_executor(_POOL, _install, self._dst(name), tensor)
            done, _ = await asyncio.wait([fut])
            for f in done:
                f.result()

    async def load_cloned(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        tasks = [
            loop.run_in_executor(_POOL, _install, self._dst(n), t.clone())
            for n, t in runai_safetensors_weights_iterator(files)
        ]
        await asyncio.gather(*tasks)
