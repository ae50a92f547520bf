"""The shared observation block and the vectorised env that drives its workers."""

from __future__ import annotations

from multiprocessing.connection import Connection
from multiprocessing.shared_memory import SharedMemory

import numpy as np


class ObsBlock:
    def __init__(self, name: str, num_envs: int, shape: tuple[int, int, int]) -> None:
        self.shm = SharedMemory(name=name)
        self.num_envs = num_envs
        self.shape = shape
        self.frame_bytes = int(np.prod(shape))

    def frame(self, env: int) -> np.ndarray:
        raw = np.frombuffer(self.shm.buf, dtype=np.uint8, count=self.frame_bytes, offset=env * self.frame_bytes)
        return raw.reshape(self.shape)

    def all_frames(self) -> np.ndarray:
        return np.frombuffer(self.shm.buf, dtype=np.uint8).reshape((self.num_envs, *self.shape))


class VecEnv:
    def __init__(self, block: ObsBlock, pipes: list[Connection]) -> None:
        self.block = block
        self.pipes = pipes

    def post_actions(self, actions: np.ndarray) -> None:
        for pipe, action in zip(self.pipes, actions.tolist()):
            pipe.send(("step", action))

    def wait_obs(self) -> list[float]:
        return [pipe.recv() for pipe in self.pipes]
