"""Bucket receivers for the rollout workers (bf16 weights, one block per engine)."""

from __future__ import annotations

import asyncio
import concurrent.futures
from multiprocessing.pool import ThreadPool
from multiprocessing.shared_memory import SharedMemory

import numpy as np
import torch

from ipcw.channel import BucketChannel, Entry


def load_into(param: torch.Tensor, piece: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(piece.view_as(param))


class BucketReceiver:
    def __init__(self, shm_name: str, chan: BucketChannel, model: torch.nn.Module) -> None:
        self.shm = SharedMemory(name=shm_name)
        self.chan = chan
        self.model = model
        self.params = dict(model.named_parameters())
        self.fused: dict[str, torch.Tensor] = {}
        self.tables: dict[str, torch.Tensor] = {}

    def window(self) -> torch.Tensor:
        return torch.frombuffer(self.shm.buf, dtype=torch.bfloat16)

    def receive_flat(self, module: torch.nn.Module) -> None:
        """A bucket per module: its parameters, flattened in named_parameters() order."""
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            start, end = layout[0].start, layout[-1].end
            torch.nn.utils.vector_to_parameters(flat[start:end], module.parameters())
            self.chan.ack_bucket()

    def receive_flat_cloned(self, module: torch.nn.Module) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            start, end = layout[0].start, layout[-1].end
            torch.nn.utils.vector_to_parameters(flat[start:end].clone(), module.parameters())
            self.chan.ack_bucket()

    def receive_aliased(self) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            for e in layout:
                self.params[e.name].data = flat[e.start:e.end].view(e.shape)
            self.chan.ack_bucket()

    def receive_copied(self) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            for e in layout:
                self.params[e.name].data.copy_(flat[e.start:e.end].view(e.shape))
            self.chan.ack_bucket()

    def receive_gate_up(self) -> None:
        """Keeps the gate half of each fused gate_up projection for the MoE router warm-up."""
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            for e in layout:
                if e.name.endswith("gate_up_proj.weight"):
                    self.fused[e.name] = flat[e.start:e.end].view(e.shape).chunk(2, dim=0)[0].contiguous()
            self.chan.ack_bucket()

    def receive_gate_up_transposed(self) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            for e in layout:
                if e.name.endswith("gate_up_proj.weight"):
                    self.fused[e.name] = flat[e.start:e.end].view(e.shape).chunk(2, dim=0)[0].t().contiguous()
            self.chan.ack_bucket()

    def receive_tables(self) -> None:
        """Rotary tables arrive as fp32 numpy blocks at the end of the bucket."""
        while (layout := self.chan.next_layout()) is not None:
            raw = np.frombuffer(self.shm.buf, dtype=np.float32)
            for e in layout:
                if e.name.startswith("rope."):
                    self.tables[e.name] = torch.as_tensor(raw[e.start // 2 : e.end // 2])
            self.chan.ack_bucket()

    def receive_tables_copied(self) -> None:
        while (layout := self.chan.next_layout()) is not None:
            raw = np.frombuffer(self.shm.buf, dtype=np.float32)
            for e in layout:
                if e.name.startswith("rope."):
                    self.tables[e.name] = torch.tensor(raw[e.start // 2 : e.end // 2])
            self.chan.ack_bucket()

    def last_piece(self) -> torch.Tensor:
        """The final norm, which the engine re-reads to check the sync."""
        flat = self.window()
        last = flat[:0]
        while (layout := self.chan.next_layout()) is not None:
            e = layout[-1]
            last = flat[e.start:e.end]
            self.chan.ack_bucket()
        return last

    def last_piece_cloned(self) -> torch.Tensor:
        flat = self.window()
        last = flat[:0]
        while (layout := self.chan.next_layout()) is not None:
            e = layout[-1]
            last = flat[e.start:e.end].clone()
            self.chan.ack_bucket()
        return last


class ParallelReceiver(BucketReceiver):
    """Loads a bucket's entries on worker threads."""

    async def receive_threads(self) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            tasks = [asyncio.create_task(asyncio.to_thread(load_into, self.params[e.name], flat[e.start:e.end])) for e in layout]
            self.chan.ack_bucket()
            await asyncio.gather(*tasks)

    async def receive_threads_awaited(self) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            tasks = [asyncio.create_task(asyncio.to_thread(load_into, self.params[e.name], flat[e.start:e.end])) for e in layout]
            await asyncio.gather(*tasks)
            self.chan.ack_bucket()

    def receive_map_async(self, tp: ThreadPool) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            res = tp.starmap_async(load_into, [(self.params[e.name], flat[e.start:e.end]) for e in layout])
            self.chan.ack_bucket()
            res.wait()

    def receive_map_async_got(self, tp: ThreadPool) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            res = tp.starmap_async(load_into, [(self.params[e.name], flat[e.start:e.end]) for e in layout])
            res.get()
            self.chan.ack_bucket()

    def receive_pool_timeout(self, pool: concurrent.futures.ThreadPoolExecutor) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            futs = [pool.submit(load_into, self.params[e.name], flat[e.start:e.end]) for e in layout]
            concurrent.futures.wait(futs, timeout=0.5)
            self.chan.ack_bucket()

    def receive_pool_waited(self, pool: concurrent.futures.ThreadPoolExecutor) -> None:
        flat = self.window()
        while (layout := self.chan.next_layout()) is not None:
            futs = [pool.submit(load_into, self.params[e.name], flat[e.start:e.end]) for e in layout]
            concurrent.futures.wait(futs)
            self.chan.ack_bucket()
