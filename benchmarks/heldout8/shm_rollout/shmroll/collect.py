"""Collection loops: read the observation, act, hand the observation on, request the next."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from shmroll.channel import EnvChannel
from shmroll.sinks import EpisodeWriter, encode_frame, obs_stats

Policy = Callable[[torch.Tensor], np.ndarray]


def collect_with_stats(channel: EnvChannel, policy: Policy, steps: int, pool: ThreadPoolExecutor) -> list[tuple[float, float]]:
    futures = []
    for _ in range(steps):
        channel.wait_ready()
        obs = channel.observation()
        futures.append(pool.submit(obs_stats, obs))
        channel.request_next(policy(obs))
    return [f.result() for f in futures]


def collect_with_stats_waited(channel: EnvChannel, policy: Policy, steps: int, pool: ThreadPoolExecutor) -> list[tuple[float, float]]:
    stats = []
    for _ in range(steps):
        channel.wait_ready()
        obs = channel.observation()
        fut = pool.submit(obs_stats, obs)
        actions = policy(obs)
        stats.append(fut.result())
        channel.request_next(actions)
    return stats


def collect_recorded(channel: EnvChannel, policy: Policy, steps: int, writer: EpisodeWriter) -> None:
    writers = []
    for step in range(steps):
        channel.wait_ready()
        obs = channel.observation()
        writers.append(threading.Thread(target=writer.write, args=(step, obs)))
        writers[-1].start()
        channel.request_next(policy(obs))
    for t in writers:
        t.join()


def collect_recorded_joined(channel: EnvChannel, policy: Policy, steps: int, writer: EpisodeWriter) -> None:
    for step in range(steps):
        channel.wait_ready()
        obs = channel.observation()
        t = threading.Thread(target=writer.write, args=(step, obs))
        t.start()
        actions = policy(obs)
        t.join()
        channel.request_next(actions)


def collect_frames(channel: EnvChannel, policy: Policy, steps: int, n_envs: int, pool: ThreadPoolExecutor) -> list[list[bytes]]:
    encoded = []
    for _ in range(steps):
        channel.wait_ready()
        obs = channel.observation()
        encoded.append(pool.map(encode_frame, obs.view(n_envs, -1).unbind(0)))
        channel.request_next(policy(obs))
    return [list(frames) for frames in encoded]


def collect_frames_drained(channel: EnvChannel, policy: Policy, steps: int, n_envs: int, pool: ThreadPoolExecutor) -> list[list[bytes]]:
    encoded = []
    for _ in range(steps):
        channel.wait_ready()
        obs = channel.observation()
        encoded.append(list(pool.map(encode_frame, obs.view(n_envs, -1).unbind(0))))
        channel.request_next(policy(obs))
    return encoded


async def collect_async(channel: EnvChannel, policy: Policy, steps: int, q: asyncio.Queue) -> None:
    for _ in range(steps):
        await asyncio.to_thread(channel.wait_ready)
        obs = channel.observation()
        q.put_nowait(obs)
        channel.request_next(policy(obs))


async def collect_async_joined(channel: EnvChannel, policy: Policy, steps: int, q: asyncio.Queue) -> None:
    for _ in range(steps):
        await asyncio.to_thread(channel.wait_ready)
        obs = channel.observation()
        q.put_nowait(obs)
        actions = policy(obs)
        await q.join()
        channel.request_next(actions)


async def consume(q: asyncio.Queue, log: list[tuple[float, float]]) -> None:
    while True:
        obs = await q.get()
        log.append(obs_stats(obs))
        q.task_done()
