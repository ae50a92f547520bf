"""Collect transitions from the simulator into a replay buffer."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np
import torch

from rollout.env_client import EnvClient
from rollout.records import EpisodeStats, Transition

Policy = Callable[[np.ndarray], int]


class Collector:
    def __init__(self, env: EnvClient, policy: Policy, encoder: Callable[[np.ndarray], np.ndarray]) -> None:
        self.env = env
        self.policy = policy
        self.encoder = encoder
        self.replay: list[Transition] = []
        self.embeddings: list[np.ndarray] = []
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.stats = EpisodeStats()

    def run_naive(self, steps: int) -> None:
        for _ in range(steps):
            obs = self.env.observe()
            action = self.policy(obs)
            self.replay.append(Transition(obs, action, 0.0))
            self.env.request_step(action)

    def run_copied(self, steps: int) -> None:
        for _ in range(steps):
            obs = self.env.observe()
            action = self.policy(obs)
            self.replay.append(Transition(obs.copy(), action, 0.0))
            self.env.request_step(action)

    def run_overlapped(self, steps: int) -> None:
        for _ in range(steps):
            obs = self.env.observe()
            fut = self.pool.submit(self.encoder, obs)
            self.env.request_step(self.policy(obs))
            self.embeddings.append(fut.result())

    def run_encoded_first(self, steps: int) -> None:
        for _ in range(steps):
            obs = self.env.observe()
            emb = self.pool.submit(self.encoder, obs).result()
            self.embeddings.append(emb)
            self.env.request_step(self.policy(obs))

    def run_with_stats(self, steps: int) -> EpisodeStats:
        stats = self.stats
        for t in range(steps):
            obs = self.env.observe()
            if t == 0:
                stats.first_obs = obs
            if t % 100 == 0:
                stats.thumbnails.append(obs[::4, ::4].copy())
            stats.length += 1
            stats.total_reward += self.env.request_step(self.policy(obs))
        return stats

    def run_logged(self, steps: int, log: Callable[[np.ndarray], None]) -> None:
        for _ in range(steps):
            obs = self.env.observe()
            threading.Thread(target=log, args=(obs,), daemon=True).start()
            self.env.request_step(self.policy(obs))

    def run_logged_joined(self, steps: int, log: Callable[[np.ndarray], None]) -> None:
        for _ in range(steps):
            obs = self.env.observe()
            th = threading.Thread(target=log, args=(obs,))
            th.start()
            th.join()
            self.env.request_step(self.policy(obs))


def frames_as_tensors(env: EnvClient, policy: Policy, steps: int) -> tuple[list[torch.Tensor], list[torch.Tensor]]:
    shared, owned = [], []
    for _ in range(steps):
        raw = env.observe_raw()
        shared.append(torch.from_numpy(raw))
        owned.append(torch.tensor(raw))
        env.request_step(policy(raw))
    return shared, owned
