"""Row-at-a-time reads over TCP; every recv_into overwrites `self.buf`."""

from __future__ import annotations

import asyncio
import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch


def score(vec: np.ndarray) -> float:
    return float(np.dot(vec.astype(np.float32), vec.astype(np.float32)))


class FeatureClient:
    def __init__(self, sock: socket.socket, dim: int) -> None:
        self.sock = sock
        self.dim = dim
        self.row_bytes = dim * 2
        self.buf = bytearray(self.row_bytes * 64)
        self.cache: dict[str, np.ndarray] = {}
        self.on_device: dict[str, torch.Tensor] = {}
        self.pool = ThreadPoolExecutor(max_workers=4)

    def _log_head(self, head: memoryview | bytes) -> None:
        print(bytes(head).hex())

    def fill_cache(self, keys: list[str]) -> None:
        for key in keys:
            n = self.sock.recv_into(self.buf, self.row_bytes, socket.MSG_WAITALL)
            row = np.frombuffer(self.buf, dtype=np.float16, count=n // 2)
            self.cache[key] = row

    def fill_cache_owned(self, keys: list[str]) -> None:
        for key in keys:
            n = self.sock.recv_into(self.buf, self.row_bytes, socket.MSG_WAITALL)
            row = np.frombuffer(self.buf, dtype=np.float16, count=n // 2)
            self.cache[key] = row.copy()

    def read_blocks(self, count: int, rows_per_block: int) -> list[np.ndarray]:
        rows: list[np.ndarray] = []
        for _ in range(count):
            n = self.sock.recv_into(self.buf, self.row_bytes * rows_per_block, socket.MSG_WAITALL)
            block = np.frombuffer(self.buf, dtype=np.float16, count=n // 2).reshape(-1, self.dim)
            rows.extend(block)
        return rows

    def read_blocks_owned(self, count: int, rows_per_block: int) -> list[np.ndarray]:
        rows: list[np.ndarray] = []
        for _ in range(count):
            n = self.sock.recv_into(self.buf, self.row_bytes * rows_per_block, socket.MSG_WAITALL)
            block = np.frombuffer(self.buf, dtype=np.float16, count=n // 2).reshape(-1, self.dim)
            rows.extend(block.copy())
        return rows

    async def score_all(self, keys: list[str]) -> list[float]:
        loop = asyncio.get_running_loop()
        pending = []
        for _ in keys:
            n = self.sock.recv_into(self.buf, self.row_bytes, socket.MSG_WAITALL)
            vec = np.frombuffer(self.buf, dtype=np.float16, count=n // 2)
            pending.append(loop.run_in_executor(self.pool, score, vec))
        return list(await asyncio.gather(*pending))

    async def score_each(self, keys: list[str]) -> list[float]:
        loop = asyncio.get_running_loop()
        out = []
        for _ in keys:
            n = self.sock.recv_into(self.buf, self.row_bytes, socket.MSG_WAITALL)
            vec = np.frombuffer(self.buf, dtype=np.float16, count=n // 2)
            out.append(await loop.run_in_executor(self.pool, score, vec))
        return out

    def upload(self, keys: list[str], device: torch.device) -> None:
        for key in keys:
            n = self.sock.recv_into(self.buf, self.row_bytes, socket.MSG_WAITALL)
            row = torch.frombuffer(self.buf, dtype=torch.float16, count=n // 2)
            self.on_device[key] = row.to(device, non_blocking=True)

    def sample_heads(self, count: int) -> None:
        for _ in range(count):
            self.sock.recv_into(self.buf, self.row_bytes, socket.MSG_WAITALL)
            threading.Thread(target=self._log_head, args=(memoryview(self.buf)[:16],)).start()

    def sample_heads_copied(self, count: int) -> None:
        for _ in range(count):
            self.sock.recv_into(self.buf, self.row_bytes, socket.MSG_WAITALL)
            threading.Thread(target=self._log_head, args=(bytes(self.buf[:16]),)).start()
