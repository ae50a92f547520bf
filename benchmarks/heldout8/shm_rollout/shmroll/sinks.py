"""Slow consumers of observations: stats, frame encoders, the episode writer."""

from __future__ import annotations

import io

import torch


def obs_stats(obs: torch.Tensor) -> tuple[float, float]:
    return float(obs.mean()), float(obs.std())


def encode_frame(frame: torch.Tensor) -> bytes:
    return frame.to(torch.float16).numpy().tobytes()


class EpisodeWriter:
    def __init__(self, out: io.BufferedWriter) -> None:
        self.out = out

    def write(self, step: int, obs: torch.Tensor) -> None:
        self.out.write(step.to_bytes(8, "little"))
        self.out.write(obs.numpy().tobytes())
