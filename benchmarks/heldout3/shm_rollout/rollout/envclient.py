"""Client side of a simulator process: observations come back in a shared-memory block."""
from __future__ import annotations

from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory

import numpy as np


class EnvClient:
    """The simulator writes the next observation into the block after each action."""

    def __init__(self, shm_name: str, conn: Connection, obs_dim: int) -> None:
        self.segment = SharedMemory(name=shm_name)
        self.conn = conn
        self.obs_dim = obs_dim

    def observation(self) -> np.ndarray:
        return np.frombuffer(self.segment.buf, dtype=np.float32, count=self.obs_dim)

    def send_action(self, action: np.ndarray) -> None:
        self.conn.send(action.tobytes())
        self.conn.recv()

    def close(self) -> None:
        self.segment.close()
