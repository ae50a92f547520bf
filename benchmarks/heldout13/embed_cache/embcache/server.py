"""Request loops of the cache server."""

from __future__ import annotations

import collections
import contextlib
import functools
import logging
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Generator, Iterable

import numpy as np
import zmq

from embcache.arena import EmbeddingArena

log = logging.getLogger(__name__)


def serve_untracked(sock: zmq.Socket, arena: EmbeddingArena) -> None:
    while True:
        ids = np.frombuffer(sock.recv(), dtype=np.int64)
        rows = arena.gather(ids)
        sock.send(rows, copy=False)


def serve_tracked(sock: zmq.Socket, arena: EmbeddingArena) -> None:
    while True:
        ids = np.frombuffer(sock.recv(), dtype=np.int64)
        with contextlib.ExitStack() as stack:
            rows = arena.gather(ids)
            tracker = sock.send(rows, copy=False, track=True)
            stack.callback(tracker.wait)


class CompressingServer:
    """Compresses answers on a worker thread so the request loop can gather the next batch."""

    def __init__(self, sock: zmq.Socket, arena: EmbeddingArena) -> None:
        self.sock = sock
        self.arena = arena
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="zlib")
        self.pending: collections.deque[Future] = collections.deque()

    def _send_compressed(self, rows: np.ndarray) -> None:
        self.sock.send(zlib.compress(rows, level=1))

    def handle(self, ids: np.ndarray) -> None:
        while self.pending:
            self.pending.popleft().result()
        rows = self.arena.gather(ids)
        self.pending.append(self.pool.submit(self._send_compressed, rows))

    def handle_eager(self, ids: np.ndarray) -> None:
        rows = self.arena.gather(ids)
        while self.pending:
            self.pending.popleft().result()
        self.pending.append(self.pool.submit(self._send_compressed, rows))


def batcher(sock: zmq.Socket, size: int) -> Generator[None, np.ndarray, None]:
    """Coalesces `size` answers into one message (send() each answer's rows to it)."""
    pending: list[np.ndarray] = []
    while True:
        rows = yield
        pending.append(rows)
        if len(pending) == size:
            sock.send(np.concatenate(pending))
            pending = []


def batcher_owned(sock: zmq.Socket, size: int) -> Generator[None, np.ndarray, None]:
    pending: list[np.ndarray] = []
    while True:
        rows = yield
        pending.append(rows.copy())
        if len(pending) == size:
            sock.send(np.concatenate(pending))
            pending = []


def serve_coalesced(sock: zmq.Socket, arena: EmbeddingArena, requests: Iterable[np.ndarray], owned: bool) -> None:
    b = batcher_owned(sock, 4) if owned else batcher(sock, 4)
    next(b)
    for ids in requests:
        b.send(arena.gather(ids))


_ARENA: EmbeddingArena | None = None


def install(arena: EmbeddingArena) -> None:
    global _ARENA
    _ARENA = arena


@functools.lru_cache(maxsize=4096)
def lookup_one(key: int) -> np.ndarray:
    assert _ARENA is not None
    return _ARENA.gather(np.array([key]))[0]


@functools.lru_cache(maxsize=4096)
def lookup_one_owned(key: int) -> np.ndarray:
    assert _ARENA is not None
    return _ARENA.gather(np.array([key]))[0].copy()


class RecentAnswers:
    """The last answers per client, for retransmission."""

    def __init__(self, arena: EmbeddingArena) -> None:
        self.arena = arena
        self.recent: dict[bytes, np.ndarray] = {}
        self.recent_half: dict[bytes, np.ndarray] = {}

    def answer(self, client: bytes, ids: np.ndarray) -> np.ndarray:
        rows = self.arena.gather(ids)
        self.recent[client] = np.asarray(rows, dtype=np.float32)
        return self.recent[client]

    def answer_half(self, client: bytes, ids: np.ndarray) -> np.ndarray:
        rows = self.arena.gather(ids)
        self.recent_half[client] = np.asarray(rows, dtype=np.float16)
        return self.recent_half[client]
