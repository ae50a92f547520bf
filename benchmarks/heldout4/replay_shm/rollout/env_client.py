"""Client side of a simulator running in another process."""

from __future__ import annotations

from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory

import numpy as np


class EnvClient:
    def __init__(self, shm_name: str, conn: Connection, obs_shape: tuple[int, ...]) -> None:
        self.block = SharedMemory(name=shm_name)
        self.conn = conn
        self.obs_shape = obs_shape
        self.count = int(np.prod(obs_shape))

    def observe(self) -> np.ndarray:
        flat = np.frombuffer(self.block.buf, dtype=np.float32, count=self.count)
        return flat.reshape(self.obs_shape)

    def observe_raw(self) -> np.ndarray:
        return np.ndarray(self.obs_shape, dtype=np.float32, buffer=self.block.buf)

    def request_step(self, action: int) -> float:
        self.conn.send(action)
        return float(self.conn.recv())
