"""Direct uploads of each streamed tensor into its parameter."""

from __future__ import annotations

import torch

from upstream.source import stream_weights

SYNC_EVERY = 8


def upload_positional(params: dict[str, torch.nn.Parameter], files: list[str]) -> None:
    for name, w in stream_weights(files):
        params[name].data.copy_(w, True)
    torch.cuda.synchronize()


def upload_positional_blocking(params: dict[str, torch.nn.Parameter], files: list[str]) -> None:
    for name, w in stream_weights(files):
        params[name].data.copy_(w, False)


def upload_sync_next(on_device: dict[str, torch.Tensor], files: list[str], dev: torch.device) -> None:
    for name, w in stream_weights(files):
        torch.cuda.synchronize()
        on_device[name] = w.to(dev, non_blocking=True)
    torch.cuda.synchronize()


def upload_sync_end(on_device: dict[str, torch.Tensor], files: list[str], dev: torch.device) -> None:
    for name, w in stream_weights(files):
        on_device[name] = w.to(dev, non_blocking=True)
        torch.cuda.synchronize()


def upload_batched_sync(params: dict[str, torch.nn.Parameter], files: list[str]) -> None:
    for i, (name, w) in enumerate(stream_weights(files)):
        params[name].data.copy_(w, non_blocking=True)
        if i % SYNC_EVERY == SYNC_EVERY - 1:
            torch.cuda.synchronize()
    torch.cuda.synchronize()


def upload_every_sync(params: dict[str, torch.nn.Parameter], files: list[str]) -> None:
    for i, (name, w) in enumerate(stream_weights(files)):
        params[name].data.copy_(w, non_blocking=True)
        torch.cuda.synchronize()


def upload_side_event_current(params: dict[str, torch.nn.Parameter], files: list[str]) -> None:
    side = torch.cuda.Stream()
    ev = torch.cuda.Event()
    for name, w in stream_weights(files):
        with torch.cuda.stream(side):
            params[name].data.copy_(w, non_blocking=True)
        ev.record()
        ev.synchronize()


def upload_side_event(params: dict[str, torch.nn.Parameter], files: list[str]) -> None:
    side = torch.cuda.Stream()
    ev = torch.cuda.Event()
    for name, w in stream_weights(files):
        with torch.cuda.stream(side):
            params[name].data.copy_(w, non_blocking=True)
        ev.record(side)
        ev.synchronize()


def upload_unbound(on_device: dict[str, torch.Tensor], files: list[str], dev: torch.device) -> None:
    for name, w in stream_weights(files):
        on_device[name] = torch.Tensor.to(w, dev, non_blocking=True)
    torch.cuda.synchronize()


def upload_unbound_blocking(on_device: dict[str, torch.Tensor], files: list[str], dev: torch.device) -> None:
    for name, w in stream_weights(files):
        on_device[name] = torch.Tensor.to(w, dev)
