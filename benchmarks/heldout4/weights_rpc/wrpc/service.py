"""Async weight-update service: swaps new weights into a serving model."""

from __future__ import annotations

import asyncio
import functools
import threading
from concurrent.futures import ThreadPoolExecutor

import torch

from wrpc.apply import assign
from wrpc.source import stream_checkpoint


class UpdateService:
    def __init__(self, model: torch.nn.Module) -> None:
        self.params = dict(model.named_parameters())
        self.pool = ThreadPoolExecutor(max_workers=4, thread_name_prefix="assign")
        self.loop = asyncio.get_event_loop()
        self.updates: asyncio.Queue[tuple[str, torch.Tensor]] = asyncio.Queue()

    async def update_serial(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        for name, t in stream_checkpoint(files):
            await loop.run_in_executor(self.pool, assign, self.params[name], t)

    async def update_gathered(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        pending = []
        for name, t in stream_checkpoint(files):
            pending.append(loop.run_in_executor(self.pool, assign, self.params[name], t))
        await asyncio.gather(*pending)

    async def update_audited(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            await asyncio.gather(asyncio.to_thread(assign, self.params[name], t), self._audit(name))

    async def update_fire_and_forget(self, files: list[str]) -> None:
        tasks = set()
        for name, t in stream_checkpoint(files):
            task = asyncio.ensure_future(asyncio.to_thread(assign, self.params[name], t))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    async def update_shielded(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            await asyncio.shield(asyncio.to_thread(assign, self.params[name], t))

    async def _audit(self, name: str) -> None:
        await asyncio.sleep(0)

    async def update_partials(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        for name, t in stream_checkpoint(files):
            job = functools.partial(assign, self.params[name], t)
            await loop.run_in_executor(None, job)

    async def update_deferred_partials(self, files: list[str]) -> None:
        loop = asyncio.get_running_loop()
        jobs = []
        for name, t in stream_checkpoint(files):
            jobs.append(functools.partial(assign, self.params[name], t))
        await loop.run_in_executor(None, lambda: [j() for j in jobs])

    async def enqueue_updates(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            await self.updates.put((name, t))

    async def enqueue_owned(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            self.updates.put_nowait((name, t.detach().clone()))

    async def apply_updates(self) -> None:
        while True:
            name, t = await self.updates.get()
            assign(self.params[name], t)
            self.updates.task_done()

    async def publish(self, name: str, t: torch.Tensor) -> None:
        assign(self.params[name], t)

    def push_from_thread(self, files: list[str]) -> None:
        """Runs on a loader thread; the event loop serves requests meanwhile."""
        for name, t in stream_checkpoint(files):
            asyncio.run_coroutine_threadsafe(self.publish(name, t), self.loop)

    def push_from_thread_waited(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            fut = asyncio.run_coroutine_threadsafe(self.publish(name, t), self.loop)
            fut.result(timeout=60)

    def push_via_callback(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            self.loop.call_soon_threadsafe(assign, self.params[name], t)

    def start_push_thread(self, files: list[str]) -> threading.Thread:
        th = threading.Thread(target=self.push_from_thread_waited, args=(files,), daemon=True)
        th.start()
        return th
