"""Hot weight reload for a running server: the loader runs without blocking the event loop."""
from __future__ import annotations

import asyncio
import logging
from concurrent.futures import ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator as stream_weights

from .apply import ParamSink, assign

log = logging.getLogger(__name__)


class ReloadService:
    def __init__(self, model: torch.nn.Module, workers: int = 4) -> None:
        self.model = model
        self.params = dict(model.named_parameters())
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.queue: asyncio.Queue[tuple[str, torch.Tensor]] = asyncio.Queue(maxsize=64)

    async def reload_stepwise(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        for name, w in stream_weights(files):
            await loop.run_in_executor(self.pool, assign, self.params[name], w)

    async def reload_fanout(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        pending = []
        for name, w in stream_weights(files):
            pending.append(loop.run_in_executor(self.pool, assign, self.params[name], w))
        await asyncio.gather(*pending)
        log.info("reloaded %d tensors", len(pending))

    async def reload_tasks(self, files: list[str]) -> None:
        tasks: set[asyncio.Task] = set()
        for name, w in stream_weights(files):
            tasks.add(asyncio.create_task(asyncio.to_thread(assign, self.params[name], w)))
        done, _ = await asyncio.wait(tasks)
        for t in done:
            t.result()

    async def reload_grouped(self, files: list[str]) -> None:
        for name, w in stream_weights(files):
            async with asyncio.TaskGroup() as tg:
                tg.create_task(asyncio.to_thread(assign, self.params[name], w))

    async def reload_cloned(self, files: list[str]) -> None:
        coros = [asyncio.to_thread(assign, self.params[n], w.clone()) for n, w in stream_weights(files)]
        await asyncio.gather(*coros)

    async def enqueue_all(self, files: list[str]) -> None:
        for name, w in stream_weights(files):
            self.queue.put_nowait((name, w))

    async def enqueue_owned(self, files: list[str]) -> None:
        for name, w in stream_weights(files):
            await self.queue.put((name, w.detach().clone()))

    async def drain(self) -> None:
        while True:
            name, w = await self.queue.get()
            assign(self.params[name], w)
            self.queue.task_done()
