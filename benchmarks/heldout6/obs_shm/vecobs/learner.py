"""The actor loop: read observations, choose actions, post them, repeat."""

from __future__ import annotations

import asyncio
import collections
from concurrent.futures import ProcessPoolExecutor

import numpy as np
import torch

from vecobs.block import ObsBlock, VecEnv
from vecobs.records import Frame


def encode_png(pixels: np.ndarray) -> bytes:
    return pixels.tobytes()


def novelty_score(pixels: np.ndarray) -> float:
    return float(pixels.std())


def policy(stack: list[np.ndarray]) -> np.ndarray:
    return np.zeros(len(stack), dtype=np.int64)


class Actor:
    def __init__(self, env: VecEnv, block: ObsBlock, history: int = 4) -> None:
        self.env = env
        self.block = block
        self.stack: collections.deque = collections.deque(maxlen=history)
        self.replay: list[Frame] = []
        self.first_obs: torch.Tensor | None = None
        self.procs = ProcessPoolExecutor(max_workers=2)

    def run_stacked(self, steps: int) -> None:
        for step in range(steps):
            obs = self.block.frame(0)
            self.stack.append(obs)
            self.env.post_actions(policy(list(self.stack)))
            self.env.wait_obs()

    def run_stacked_owned(self, steps: int) -> None:
        for step in range(steps):
            obs = self.block.frame(0)
            self.stack.append(obs.copy())
            self.env.post_actions(policy(list(self.stack)))
            self.env.wait_obs()

    def run_replay(self, steps: int) -> None:
        for step in range(steps):
            for env in range(self.block.num_envs):
                obs = self.block.frame(env)
                self.replay.append(Frame(step, env, obs.astype(np.uint8, copy=False)))
            self.env.post_actions(np.zeros(self.block.num_envs, dtype=np.int64))
            self.env.wait_obs()

    def run_replay_float(self, steps: int) -> None:
        for step in range(steps):
            for env in range(self.block.num_envs):
                obs = self.block.frame(env)
                self.replay.append(Frame(step, env, obs.astype(np.float32)))
            self.env.post_actions(np.zeros(self.block.num_envs, dtype=np.int64))
            self.env.wait_obs()

    def remember_first(self) -> None:
        self.first_obs = torch.as_tensor(self.block.all_frames())
        self.env.post_actions(np.zeros(self.block.num_envs, dtype=np.int64))

    def remember_first_float(self) -> None:
        self.first_obs = torch.as_tensor(self.block.all_frames(), dtype=torch.float32)
        self.env.post_actions(np.zeros(self.block.num_envs, dtype=np.int64))

    def score_late(self, steps: int) -> list[float]:
        futures = []
        for step in range(steps):
            frames = self.block.all_frames()
            futures.append(self.procs.submit(novelty_score, frames))
            self.env.post_actions(np.zeros(self.block.num_envs, dtype=np.int64))
            self.env.wait_obs()
        return [f.result() for f in futures]

    def score_now(self, steps: int) -> list[float]:
        scores = []
        for step in range(steps):
            frames = self.block.all_frames()
            scores.append(self.procs.submit(novelty_score, frames).result())
            self.env.post_actions(np.zeros(self.block.num_envs, dtype=np.int64))
            self.env.wait_obs()
        return scores


async def record_video(actor: Actor, steps: int) -> list[bytes]:
    chunks: list[bytes] = []
    pending: list[asyncio.Task] = []
    for step in range(steps):
        obs = actor.block.frame(0)
        pending.append(asyncio.create_task(asyncio.to_thread(encode_png, obs)))
        actor.env.post_actions(np.zeros(actor.block.num_envs, dtype=np.int64))
        await asyncio.to_thread(actor.env.wait_obs)
    chunks.extend(await asyncio.gather(*pending))
    return chunks


async def record_video_awaited(actor: Actor, steps: int) -> list[bytes]:
    chunks: list[bytes] = []
    for step in range(steps):
        obs = actor.block.frame(0)
        chunks.append(await asyncio.to_thread(encode_png, obs))
        actor.env.post_actions(np.zeros(actor.block.num_envs, dtype=np.int64))
        await asyncio.to_thread(actor.env.wait_obs)
    return chunks


async def record_grouped(actor: Actor, steps: int) -> None:
    async with asyncio.TaskGroup() as tg:
        for step in range(steps):
            obs = actor.block.frame(0)
            tg.create_task(asyncio.to_thread(encode_png, obs))
            actor.env.post_actions(np.zeros(actor.block.num_envs, dtype=np.int64))
            await asyncio.to_thread(actor.env.wait_obs)


async def record_grouped_per_step(actor: Actor, steps: int) -> None:
    for step in range(steps):
        obs = actor.block.frame(0)
        async with asyncio.TaskGroup() as tg:
            tg.create_task(asyncio.to_thread(encode_png, obs))
        actor.env.post_actions(np.zeros(actor.block.num_envs, dtype=np.int64))
        await asyncio.to_thread(actor.env.wait_obs)
