"""How the server wires a loader to a model."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor

import torch

from shfetch import loader
from shfetch.sinks import build_sink


def load_model(model: torch.nn.Module, files: list[str], mapping: dict[str, str], mode: str, loop: asyncio.AbstractEventLoop | None = None) -> None:
    params = dict(model.named_parameters())
    with ThreadPoolExecutor(max_workers=8) as pool:
        if mode == "production":
            loader.ShardLoader(model, pool).load(files, mapping)
        elif mode == "quick":
            loader.QuickShardLoader(model, pool).load(files, mapping)
        elif mode == "sink":
            loader.drive(build_sink(params, pool), files, mapping)
        elif mode == "sink-owned":
            loader.drive_owned(build_sink(params, pool), files, mapping)
        elif mode == "sink-stepwise":
            loader.drive_stepwise(build_sink(params, pool), files, mapping)
        elif mode == "loop" and loop is not None:
            loader.load_on_loop(params, files, mapping, loop)
        elif mode == "loop-waited" and loop is not None:
            loader.load_on_loop_waited(params, files, mapping, loop)
        else:
            loader.load_gated(params, files, mapping, pool)
