"""What the learner keeps across steps: a replay list, the last header, episode ids."""

from __future__ import annotations

import struct

import numpy as np
import torch

from shmroll.channel import HEADER_BYTES, EnvChannel


class RolloutBuffer:
    def __init__(self, channel: EnvChannel) -> None:
        self.channel = channel
        self.replay: list[torch.Tensor] = []
        self.last_header: memoryview | bytes = b""
        self.episode_ids: list[tuple[int, int]] = []

    def step(self, actions: np.ndarray) -> None:
        self.channel.wait_ready()
        obs = self.channel.observation()
        self.replay.append(obs)
        self.channel.request_next(actions)

    def step_copied(self, actions: np.ndarray) -> None:
        self.channel.wait_ready()
        obs = self.channel.observation()
        self.replay.append(obs.clone())
        self.channel.request_next(actions)

    def note_header(self, actions: np.ndarray) -> None:
        self.channel.wait_ready()
        self.last_header = self.channel.block.buf[:HEADER_BYTES]
        self.channel.request_next(actions)

    def note_header_copied(self, actions: np.ndarray) -> None:
        self.channel.wait_ready()
        self.last_header = bytes(self.channel.block.buf[:HEADER_BYTES])
        self.channel.request_next(actions)

    def note_episode(self, actions: np.ndarray) -> None:
        self.channel.wait_ready()
        self.episode_ids.append(struct.unpack_from("<QQ", self.channel.block.buf, 0))
        self.channel.request_next(actions)


def first_observation(channel: EnvChannel, noop: np.ndarray) -> torch.Tensor:
    """Reset helper: take the reset observation and let the envs take their first step."""
    channel.wait_ready()
    obs = channel.observation()
    channel.request_next(noop)
    return obs


def first_observation_copied(channel: EnvChannel, noop: np.ndarray) -> torch.Tensor:
    channel.wait_ready()
    obs = channel.observation().clone()
    channel.request_next(noop)
    return obs
