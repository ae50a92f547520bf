"""The relay loops: one per connection, each with its own way of handing frames on."""

from __future__ import annotations

import asyncio
import threading
from concurrent.futures import ThreadPoolExecutor

from frelay.store import BlockStore
from frelay.wire import KIND_KV, FrameReader

CHUNK = 1 << 16


class ThreadedRelay:
    """One writer thread per KV frame (the store is slow; frames are rare on this link)."""

    def __init__(self, reader: FrameReader, store: BlockStore) -> None:
        self.reader = reader
        self.store = store

    def run(self) -> None:
        for seq, (kind, payload) in enumerate(self.reader.frames()):
            if kind != KIND_KV:
                continue
            threading.Thread(target=self.store.put, args=(seq, payload), daemon=True).start()

    def run_copied(self) -> None:
        for seq, (kind, payload) in enumerate(self.reader.frames()):
            if kind != KIND_KV:
                continue
            threading.Thread(target=self.store.put, args=(seq, bytes(payload)), daemon=True).start()


class LoopRelay:
    """Receives on a thread; the asyncio side consumes frames from a queue."""

    def __init__(self, reader: FrameReader, loop: asyncio.AbstractEventLoop) -> None:
        self.reader = reader
        self.loop = loop
        self.queue: asyncio.Queue[tuple[int, memoryview | bytes]] = asyncio.Queue()

    def receive_forever(self) -> None:
        for kind, payload in self.reader.frames():
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (kind, payload))

    def receive_forever_copied(self) -> None:
        for kind, payload in self.reader.frames():
            self.loop.call_soon_threadsafe(self.queue.put_nowait, (kind, bytes(payload)))

    async def consume(self, store: BlockStore) -> None:
        seq = 0
        while True:
            kind, payload = await self.queue.get()
            if kind == KIND_KV:
                store.put(seq, payload)
                seq += 1
            self.queue.task_done()


class ChunkedRelay:
    """Big frames are written to the store in 64 KiB chunks, in parallel."""

    def __init__(self, reader: FrameReader, store: BlockStore, pool: ThreadPoolExecutor) -> None:
        self.reader = reader
        self.store = store
        self.pool = pool

    def run(self) -> None:
        for kind, payload in self.reader.frames():
            chunks = [payload[i : i + CHUNK] for i in range(0, len(payload), CHUNK)]
            self.pool.map(self.store.put_chunk, range(len(chunks)), chunks)

    def run_drained(self) -> None:
        for kind, payload in self.reader.frames():
            chunks = [payload[i : i + CHUNK] for i in range(0, len(payload), CHUNK)]
            for _ in self.pool.map(self.store.put_chunk, range(len(chunks)), chunks):
                pass
