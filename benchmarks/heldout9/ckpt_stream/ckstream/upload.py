"""Pushing streamed weights to the rollout engine's GPU copy."""

import logging
import time

import torch

from .reader import streamed

log = logging.getLogger(__name__)


def push_pinned(params: dict[str, torch.Tensor], files: list[str], device: torch.device) -> None:
    with streamed(files) as tensors:
        for name, w in tensors:
            params[name] = w.pin_memory().to(device, non_blocking=True)


def push_pinned_synced(params: dict[str, torch.Tensor], files: list[str], device: torch.device) -> None:
    with streamed(files) as tensors:
        for name, w in tensors:
            params[name] = w.pin_memory().to(device, non_blocking=True)
            torch.cuda.current_stream().synchronize()


def push_by_layer(params: dict[str, torch.Tensor], files: list[str]) -> None:
    current = None
    with streamed(files) as tensors:
        for name, w in tensors:
            layer = name.split(".")[2] if name.startswith("model.layers.") else name
            if layer != current:
                torch.cuda.synchronize()
                current = layer
            params[name].copy_(w, non_blocking=True)
    torch.cuda.synchronize()


def push_each(params: dict[str, torch.Tensor], files: list[str], side: torch.cuda.Stream) -> None:
    with streamed(files) as tensors:
        for name, w in tensors:
            with torch.cuda.stream(side):
                params[name].copy_(w, non_blocking=True)
            side.synchronize()


def push_polled(params: dict[str, torch.Tensor], files: list[str], side: torch.cuda.Stream) -> None:
    with streamed(files) as tensors:
        for name, w in tensors:
            with torch.cuda.stream(side):
                params[name].copy_(w, non_blocking=True)
            while not side.query():
                time.sleep(0)


def push_checked(params: dict[str, torch.Tensor], files: list[str], side: torch.cuda.Stream) -> None:
    with streamed(files) as tensors:
        for name, w in tensors:
            with torch.cuda.stream(side):
                params[name].copy_(w, non_blocking=True)
            if not side.query():
                log.debug("copy of %s still running", name)


def stage_all(files: list[str]) -> dict[str, torch.Tensor]:
    on_device = {}
    with streamed(files) as tensors:
        for name, w in tensors:
            on_device[name] = w.cuda(non_blocking=True)
    torch.cuda.synchronize()
    return on_device


def stage_all_blocking(files: list[str]) -> dict[str, torch.Tensor]:
    on_device = {}
    with streamed(files) as tensors:
        for name, w in tensors:
            on_device[name] = w.cuda()
    return on_device
