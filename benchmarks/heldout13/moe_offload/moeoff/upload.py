"""Uploading streamed experts to the GPU expert slots."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import torch

from moeoff.stream import iter_expert_tensors


@dataclass(frozen=True)
class UploadConfig:
    device: str = "cuda:0"
    non_blocking: bool = True


class ExpertUploader:
    def __init__(self, cfg: UploadConfig, slots: dict[str, torch.Tensor]) -> None:
        self.cfg = cfg
        self.slots = slots
        self.copied = torch.cuda.Event()
        self.h2d = torch.cuda.Stream(device=cfg.device)

    def upload(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            self.slots[name] = w.to(self.cfg.device, non_blocking=self.cfg.non_blocking)

    def upload_fenced(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            self.slots[name] = w.to(self.cfg.device, non_blocking=self.cfg.non_blocking)
            self.copied.record()
            self.copied.synchronize()

    def upload_into(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            dst = self.slots[name]
            dst.copy_(w, non_blocking=True)
            dst.record_stream(torch.cuda.current_stream(self.cfg.device))

    def upload_staged(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            staging = torch.empty_like(w, pin_memory=True)
            staging.copy_(w)
            self.slots[name].copy_(staging, non_blocking=True)

    def upload_side_stream(self, files: list[str]) -> None:
        with contextlib.ExitStack() as stack:
            stack.callback(self.h2d.synchronize)
            for name, w in iter_expert_tensors(files):
                with torch.cuda.stream(self.h2d):
                    self.slots[name].copy_(w, non_blocking=True)

    def upload_side_stream_each(self, files: list[str]) -> None:
        for name, w in iter_expert_tensors(files):
            with contextlib.ExitStack() as stack:
                stack.callback(self.h2d.synchronize)
                with torch.cuda.stream(self.h2d):
                    self.slots[name].copy_(w, non_blocking=True)


class GraphedUploader:
    """Experts fed to a captured CUDA graph through its static input (the graph dequantises)."""

    def __init__(self, static_in: torch.Tensor, graph: torch.cuda.CUDAGraph, device: str = "cuda:0") -> None:
        self.static_in = static_in
        self.graph = graph
        self.move_kwargs = {"device": device, "non_blocking": True}
        self.move_kwargs_blocking = {"device": device}

    def replay_all(self, files: list[str], sink: dict[str, torch.Tensor]) -> None:
        for name, w in iter_expert_tensors(files):
            self.static_in.copy_(w, non_blocking=True)
            self.graph.replay()

    def replay_all_synced(self, files: list[str], sink: dict[str, torch.Tensor]) -> None:
        for name, w in iter_expert_tensors(files):
            self.static_in.copy_(w, non_blocking=True)
            self.graph.replay()
            torch.cuda.current_stream().synchronize()

    def move_all(self, files: list[str], sink: dict[str, torch.Tensor]) -> None:
        for name, w in iter_expert_tensors(files):
            sink[name] = w.to(**self.move_kwargs)

    def move_all_blocking(self, files: list[str], sink: dict[str, torch.Tensor]) -> None:
        for name, w in iter_expert_tensors(files):
            sink[name] = w.to(**self.move_kwargs_blocking)
