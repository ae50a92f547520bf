"""Uploads through one pinned stage, dequantising while staging."""

from __future__ import annotations

import time

import torch

from upstream.source import stream_weights


def upload_staged(params: dict[str, torch.nn.Parameter], scales: dict[str, float], files: list[str], cap: int) -> None:
    stage = torch.empty(cap, dtype=torch.float32, pin_memory=True)
    for name, w in stream_weights(files):
        n = w.numel()
        torch.mul(w.view(-1), scales.get(name, 1.0), out=stage[:n])
        params[name].data.view(-1).copy_(stage[:n], non_blocking=True)
    torch.cuda.synchronize()


def upload_staged_polled(params: dict[str, torch.nn.Parameter], scales: dict[str, float], files: list[str], cap: int) -> None:
    stage = torch.empty(cap, dtype=torch.float32, pin_memory=True)
    for name, w in stream_weights(files):
        n = w.numel()
        while not torch.cuda.current_stream().query():
            time.sleep(0)
        torch.mul(w.view(-1), scales.get(name, 1.0), out=stage[:n])
        params[name].data.view(-1).copy_(stage[:n], non_blocking=True)
    torch.cuda.synchronize()
