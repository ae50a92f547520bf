"""The learner's end of one env worker: a shared block for observations, a pipe for actions."""

from __future__ import annotations

from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory

import numpy as np
import torch

HEADER_BYTES = 16


class EnvChannel:
    def __init__(self, block_name: str, conn: Connection, obs_numel: int) -> None:
        self.block = SharedMemory(name=block_name)
        self.conn = conn
        self.obs_numel = obs_numel

    def wait_ready(self) -> None:
        """Blocks until the worker has written the next observation batch."""
        self.conn.recv()

    def request_next(self, actions: np.ndarray) -> None:
        """The worker steps its envs and overwrites the block."""
        self.conn.send(actions)

    def observation(self) -> torch.Tensor:
        return torch.frombuffer(self.block.buf, dtype=torch.float32, count=self.obs_numel, offset=HEADER_BYTES)

    def close(self) -> None:
        self.block.close()
