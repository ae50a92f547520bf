"""Direct uploads of streamed tensors into the model's parameters."""

from __future__ import annotations

import dataclasses

import torch

from ringload.stream import stream_shards


@dataclasses.dataclass(frozen=True)
class UploadConfig:
    overlap: bool = True
    device: str = "cuda:0"


def upload_wait_event(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    copied = torch.cuda.Event()
    for name, w in stream_shards(files):
        params[name].data.copy_(w, non_blocking=True)
        copied.record()
        torch.cuda.current_stream().wait_event(copied)


def upload_event_synced(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    copied = torch.cuda.Event()
    for name, w in stream_shards(files):
        params[name].data.copy_(w, non_blocking=True)
        copied.record()
        copied.synchronize()


def upload_configured(model: torch.nn.Module, files: list[str], cfg: UploadConfig = UploadConfig()) -> None:
    params = dict(model.named_parameters())
    for name, w in stream_shards(files):
        params[name].data = w.to(cfg.device, non_blocking=cfg.overlap)
    torch.cuda.synchronize()


def upload_configured_drained(model: torch.nn.Module, files: list[str], cfg: UploadConfig = UploadConfig()) -> None:
    params = dict(model.named_parameters())
    for name, w in stream_shards(files):
        params[name].data = w.to(cfg.device, non_blocking=cfg.overlap)
        torch.accelerator.synchronize()


def upload_side(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    side = torch.cuda.Stream()
    for name, w in stream_shards(files):
        with torch.cuda.stream(side):
            params[name].data.copy_(w, non_blocking=True)
        torch.cuda.current_stream().synchronize()


def upload_side_synced(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    side = torch.cuda.Stream()
    for name, w in stream_shards(files):
        with torch.cuda.stream(side):
            params[name].data.copy_(w, non_blocking=True)
        side.synchronize()


def upload_norm_synced(model: torch.nn.Module, files: list[str]) -> None:
    """Synchronises at each layer's norm, the last tensor of a layer in our shards."""
    params = dict(model.named_parameters())
    for name, w in stream_shards(files):
        params[name].data.copy_(w, non_blocking=True)
        if name.endswith("post_attention_layernorm.weight"):
            torch.cuda.synchronize()


def upload_finally_synced(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in stream_shards(files):
        try:
            params[name].data.copy_(w, non_blocking=True)
        finally:
            torch.cuda.synchronize()
