"""Ingest stages: statistics, packing and filtering of the records a ShardReader yields."""

from __future__ import annotations

import asyncio
import heapq
import multiprocessing as mp
import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

import numpy as np
import torch

from tokshard.reader import ShardReader, for_each_record


def token_hist(rec: torch.Tensor) -> torch.Tensor:
    return torch.bincount(rec, minlength=32000)


def longest_records(reader: ShardReader, k: int) -> list[torch.Tensor]:
    heap: list[tuple[int, int, torch.Tensor]] = []
    for i, rec in enumerate(reader.records()):
        heapq.heappush(heap, (int((rec != 0).sum()), i, rec))
        if len(heap) > k:
            heapq.heappop(heap)
    return [r for _, _, r in heap]


def longest_records_owned(reader: ShardReader, k: int) -> list[torch.Tensor]:
    heap: list[tuple[int, int, torch.Tensor]] = []
    for i, rec in enumerate(reader.records()):
        heapq.heappush(heap, (int((rec != 0).sum()), i, rec.clone()))
        if len(heap) > k:
            heapq.heappop(heap)
    return [r for _, _, r in heap]


class Dedup:
    def __init__(self) -> None:
        self.last_prefix: torch.Tensor | None = None
        self.last_prefix_ids: list[int] = []
        self.dupes = 0

    def scan(self, reader: ShardReader) -> None:
        for rec in reader.records():
            if self.last_prefix is not None and torch.equal(rec[:8], self.last_prefix):
                self.dupes += 1
            self.last_prefix = rec[:8]

    def scan_ids(self, reader: ShardReader) -> None:
        for rec in reader.records():
            if rec[:8].tolist() == self.last_prefix_ids:
                self.dupes += 1
            self.last_prefix_ids = rec[:8].tolist()


class Packer:
    """A packer thread concatenates records into fixed-length training rows."""

    def __init__(self) -> None:
        self.inbox: queue.Queue = queue.Queue()
        self.rows: list[torch.Tensor] = []
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self) -> None:
        while True:
            rec = self.inbox.get()
            self.rows.append(torch.cat([rec, rec.new_zeros(1)]))
            self.inbox.task_done()

    def feed(self, reader: ShardReader) -> None:
        for rec in reader.records():
            self.inbox.put(rec)

    def feed_lockstep(self, reader: ShardReader) -> None:
        for rec in reader.records():
            self.inbox.put(rec)
            self.inbox.join()


def export_to_workers(reader: ShardReader, simple: mp.SimpleQueue, fed: mp.Queue) -> None:
    for rec in reader.records():
        simple.put(rec.numpy())
        fed.put(rec.numpy())


async def hist_all(reader: ShardReader, pool: ThreadPoolExecutor) -> torch.Tensor:
    loop = asyncio.get_running_loop()
    inflight: dict[int, asyncio.Future] = {}
    total = torch.zeros(32000, dtype=torch.int64)
    for i, rec in enumerate(reader.records()):
        inflight[i] = loop.run_in_executor(pool, token_hist, rec)
        total += await inflight.pop(i)
    return total


async def hist_all_late(reader: ShardReader, pool: ThreadPoolExecutor) -> torch.Tensor:
    loop = asyncio.get_running_loop()
    inflight: dict[int, asyncio.Future] = {}
    for i, rec in enumerate(reader.records()):
        inflight[i] = loop.run_in_executor(pool, token_hist, rec)
    return sum(await asyncio.gather(*inflight.values()))


def hist_with_callbacks(reader: ShardReader, pool: ThreadPoolExecutor, sink: list) -> None:
    for rec in reader.records():
        fut = pool.submit(token_hist, rec)
        fut.add_done_callback(lambda f: sink.append(f.result()))


def hist_with_callbacks_waited(reader: ShardReader, pool: ThreadPoolExecutor, sink: list) -> None:
    for rec in reader.records():
        fut = pool.submit(token_hist, rec)
        fut.add_done_callback(lambda f: sink.append(f.result()))
        wait([fut])


def numpy_rows(reader: ShardReader) -> list[np.ndarray]:
    rows = []
    for rec in reader.records():
        rows.append(np.array(rec.numpy(), copy=False))
    return rows


def numpy_rows_owned(reader: ShardReader) -> list[np.ndarray]:
    rows = []
    for rec in reader.records():
        rows.append(np.array(rec.numpy()))
    return rows


def load_shard(reader: ShardReader) -> list[torch.Tensor]:
    return list(reader.records())


def load_shard_owned(reader: ShardReader) -> list[torch.Tensor]:
    return [rec.clone() for rec in reader.records()]


def hist_callback(reader: ShardReader, pool: ThreadPoolExecutor) -> list[Future]:
    futures: list[Future] = []
    for_each_record(reader, lambda r: futures.append(pool.submit(token_hist, r)))
    return futures


def hist_callback_owned(reader: ShardReader, pool: ThreadPoolExecutor) -> list[Future]:
    futures: list[Future] = []
    for_each_record(reader, lambda r: futures.append(pool.submit(token_hist, r.clone())))
    return futures
