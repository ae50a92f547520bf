"""Receives a request's KV chunks and hands them to the store's workers."""

from __future__ import annotations

import functools
import queue
import threading
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import numpy as np

from kvwire.conn import ChunkConn
from kvwire.records import KVChunk
from kvwire.store import LocalKVStore


class KVReceiver:
    def __init__(self, store: LocalKVStore, workers: int = 4) -> None:
        self.store = store
        self.pool = ThreadPoolExecutor(max_workers=workers)
        self.work_q: "queue.Queue[KVChunk | None]" = queue.Queue(maxsize=64)
        self.pending: list[KVChunk] = []
        self.inflight = set()
        threading.Thread(target=self._drain, daemon=True).start()

    def _drain(self) -> None:
        while (item := self.work_q.get()) is not None:
            self.store.write(item.layer, item.index, item.payload)
            self.work_q.task_done()

    # -- queue hand-offs to the writer thread -------------------------------------------
    def recv_queued(self, conn: ChunkConn) -> None:
        for layer, index, payload in conn.chunks():
            self.work_q.put(KVChunk(layer, index, payload))

    def recv_queued_joined(self, conn: ChunkConn) -> None:
        for layer, index, payload in conn.chunks():
            self.work_q.put(KVChunk(layer, index, payload))
            self.work_q.join()

    # -- pool hand-offs ------------------------------------------------------------------
    def recv_partial(self, conn: ChunkConn) -> None:
        for layer, index, payload in conn.chunks():
            self.pool.submit(functools.partial(self.store.write, layer, index, payload))

    def recv_bytes(self, conn: ChunkConn) -> None:
        for layer, index, payload in conn.chunks():
            self.pool.submit(self.store.write_bytes, layer, index, payload.tobytes())

    def recv_windowed(self, conn: ChunkConn, window: int = 4) -> None:
        for layer, index, payload in conn.chunks():
            self.inflight.add(self.pool.submit(self.store.write, layer, index, payload))
            if len(self.inflight) >= window:
                done, self.inflight = wait(self.inflight, return_when=FIRST_COMPLETED)

    def recv_one_at_a_time(self, conn: ChunkConn) -> None:
        for layer, index, payload in conn.chunks():
            fut = self.pool.submit(self.store.write, layer, index, payload)
            wait([fut], return_when=FIRST_COMPLETED)

    # -- records kept on the receiver --------------------------------------------------
    def recv_deferred(self, conn: ChunkConn) -> None:
        for layer, index, payload in conn.chunks():
            self.pending.append(KVChunk(layer, index, payload, tags={"state": "deferred"}))
        self.flush()

    def recv_deferred_copied(self, conn: ChunkConn) -> None:
        for layer, index, payload in conn.chunks():
            self.pending.append(KVChunk(layer, index, payload.copy(), tags={"state": "deferred"}))
        self.flush()

    def flush(self) -> None:
        for item in self.pending:
            self.store.write(item.layer, item.index, item.payload)
        self.pending.clear()

    def last_chunk(self, conn: ChunkConn) -> np.ndarray | None:
        last = None
        for _layer, _index, payload in conn.chunks():
            last = payload
        return last

    def last_chunk_copied(self, conn: ChunkConn) -> np.ndarray | None:
        last = None
        for _layer, _index, payload in conn.chunks():
            last = payload.copy()
        return last

    def largest_first(self, conn: ChunkConn) -> list[tuple[int, int, np.ndarray]]:
        return sorted(conn.chunks(), key=lambda c: -c[2].nbytes)

    def largest_first_copied(self, conn: ChunkConn) -> list[tuple[int, int, np.ndarray]]:
        return sorted(((l, i, p.copy()) for l, i, p in conn.chunks()), key=lambda c: -c[2].nbytes)
