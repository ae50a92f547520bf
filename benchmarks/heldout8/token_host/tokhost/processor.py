"""The output processor of the overlapped decode loop."""

from __future__ import annotations

import asyncio
import collections
import copy
import queue
import threading
import time

import numpy as np
import torch

from tokhost.fencing import DeviceFenceMixin
from tokhost.transfer import CPU, to_host


def detokenize(ids: torch.Tensor, out: queue.Queue) -> None:
    out.put(ids.tolist())


class OutputProcessor(DeviceFenceMixin):
    def __init__(self, max_batch: int, max_steps: int, loop: asyncio.AbstractEventLoop, overlap: bool = True) -> None:
        self.loop = loop
        self.overlap = overlap
        self.text_q: queue.Queue = queue.Queue()
        self.ready: asyncio.Queue = asyncio.Queue()
        self.history = np.zeros((max_steps, max_batch), dtype=np.int64)
        self.logprob_log: list[dict[str, torch.Tensor]] = []
        self.pending: collections.deque[tuple[torch.cuda.Event, torch.Tensor]] = collections.deque()

    # --- reading the ids on this thread -----------------------------------------------------
    def step_ids(self, sampled: dict[str, torch.Tensor]) -> list[int]:
        host = to_host(sampled)
        return host["token_ids"].tolist()

    def step_ids_fenced(self, sampled: dict[str, torch.Tensor]) -> list[int]:
        host = to_host(sampled)
        self._fence()
        return host["token_ids"].tolist()

    def step_ids_blocking(self, sampled: dict[str, torch.Tensor]) -> list[int]:
        host = to_host(sampled, non_blocking=False)
        return host["token_ids"].tolist()

    def record_step(self, step: int, sampled: dict[str, torch.Tensor]) -> None:
        host = to_host(sampled)
        np.copyto(self.history[step, : host["token_ids"].numel()], host["token_ids"].numpy())

    def record_step_fenced(self, step: int, sampled: dict[str, torch.Tensor]) -> None:
        host = to_host(sampled)
        self._fence()
        np.copyto(self.history[step, : host["token_ids"].numel()], host["token_ids"].numpy())

    def keep_logprobs(self, sampled: dict[str, torch.Tensor]) -> None:
        host = to_host({"logprobs": sampled["logprobs"], "ranks": sampled["ranks"]})
        self.logprob_log.append(copy.deepcopy(host))

    def keep_logprobs_fenced(self, sampled: dict[str, torch.Tensor]) -> None:
        host = to_host({"logprobs": sampled["logprobs"], "ranks": sampled["ranks"]})
        self._fence()
        self.logprob_log.append(copy.deepcopy(host))

    # --- handing the ids to other threads ---------------------------------------------------
    def detok_thread(self, sampled: dict[str, torch.Tensor]) -> None:
        host = to_host(sampled)
        threading.Thread(target=detokenize, args=(host["token_ids"], self.text_q), daemon=True).start()

    def detok_thread_fenced(self, sampled: dict[str, torch.Tensor]) -> None:
        host = to_host(sampled)
        self._fence()
        threading.Thread(target=detokenize, args=(host["token_ids"], self.text_q), daemon=True).start()

    def publish(self, sampled: dict[str, torch.Tensor]) -> None:
        """Called on the scheduler thread; the API server's loop streams the ids to clients."""
        host = to_host(sampled)
        self.loop.call_soon_threadsafe(self.ready.put_nowait, host["token_ids"])

    def publish_fenced(self, sampled: dict[str, torch.Tensor]) -> None:
        host = to_host(sampled)
        self._fence()
        self.loop.call_soon_threadsafe(self.ready.put_nowait, host["token_ids"])

    async def stream_to_clients(self, send) -> None:
        while True:
            ids = await self.ready.get()
            await send(ids.tolist())

    # --- deferred reads through a deque of events -------------------------------------------
    def enqueue(self, next_ids: torch.Tensor) -> None:
        host = next_ids.to(CPU, non_blocking=True)
        copied = torch.cuda.Event()
        copied.record()
        self.pending.append((copied, host))

    def drain_ready(self) -> list[int]:
        out: list[int] = []
        while self.pending:
            copied, host = self.pending[0]
            if not copied.query():
                break
            self.pending.popleft()
            out.extend(host.tolist())
        return out

    def drain_all(self) -> list[int]:
        out: list[int] = []
        while self.pending:
            copied, host = self.pending.popleft()
            out.extend(host.tolist())
        return out

    def drain_all_polled(self) -> list[int]:
        out: list[int] = []
        while self.pending:
            copied, host = self.pending.popleft()
            while not copied.query():
                time.sleep(0)
            out.extend(host.tolist())
        return out

    # --- early return on the non-overlapped path --------------------------------------------
    def finished(self, finished_gpu: torch.Tensor) -> list[bool]:
        host = finished_gpu.to(CPU, non_blocking=self.overlap)
        if not self.overlap:
            return host.tolist()
        return host.tolist()

    def finished_fenced(self, finished_gpu: torch.Tensor) -> list[bool]:
        host = finished_gpu.to(CPU, non_blocking=self.overlap)
        if not self.overlap:
            return host.tolist()
        self._fence()
        return host.tolist()
