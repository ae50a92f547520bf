"""Roll out a policy against the simulator and keep the trajectory for the learner."""
from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from typing import Callable

import numpy as np

from .envclient import EnvClient

Policy = Callable[[np.ndarray], np.ndarray]


def _summarise(obs: np.ndarray) -> float:
    return float(np.linalg.norm(obs))


def rollout(client: EnvClient, policy: Policy, steps: int) -> list[np.ndarray]:
    trajectory: list[np.ndarray] = []
    for _ in range(steps):
        obs = client.observation()
        trajectory.append(obs)
        client.send_action(policy(obs))
    return trajectory


def rollout_owned(client: EnvClient, policy: Policy, steps: int) -> list[np.ndarray]:
    trajectory: list[np.ndarray] = []
    for _ in range(steps):
        obs = client.observation()
        trajectory.append(obs.copy())
        client.send_action(policy(obs))
    return trajectory


def rollout_logged(client: EnvClient, policy: Policy, steps: int, pool: ThreadPoolExecutor) -> list[float]:
    norms = []
    for _ in range(steps):
        obs = client.observation()
        fut = pool.submit(_summarise, obs)
        client.send_action(policy(obs))
        norms.append(fut.result())
    return norms


def rollout_logged_waited(client: EnvClient, policy: Policy, steps: int, pool: ThreadPoolExecutor) -> list[float]:
    norms = []
    for _ in range(steps):
        obs = client.observation()
        fut = pool.submit(_summarise, obs)
        action = policy(obs)
        norms.append(fut.result())
        client.send_action(action)
    return norms
