"""Layer stagers: each copies the streamed checkpoint into the model its own way."""

from __future__ import annotations

import collections
import zlib
from concurrent.futures import Future, ThreadPoolExecutor

import torch

from lstage.devcopy import to_device_async, to_device_fenced
from lstage.source import stream_checkpoint

COPY_WINDOW = 3  # copies in flight before the oldest is waited for


def checksum(name: str, w: torch.Tensor) -> tuple[str, int]:
    return name, zlib.crc32(w.view(torch.uint8).numpy())


class LayerStager:
    def __init__(self, model: torch.nn.Module, device: torch.device, max_numel: int) -> None:
        self.device = device
        self.params = dict(model.named_parameters())
        self.copy_stream = torch.cuda.Stream(device)
        self.compute_stream = torch.cuda.current_stream(device)
        self.staged: dict[str, torch.Tensor] = {}
        self.stages = [torch.empty(max_numel, dtype=torch.bfloat16, pin_memory=True) for _ in range(2)]
        self.stage_events = [torch.cuda.Event(), torch.cuda.Event()]
        self.tied: dict[str, torch.Tensor] = {}
        self.fp32_norms: dict[str, torch.Tensor] = {}
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.sums: dict[str, int] = {}

    def load_side_stream(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            with torch.cuda.stream(self.copy_stream):
                self.params[name].data.copy_(w, non_blocking=True)
            torch.cuda.current_stream(self.device).wait_stream(self.copy_stream)

    def load_side_stream_synced(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            with torch.cuda.stream(self.copy_stream):
                self.params[name].data.copy_(w, non_blocking=True)
            self.copy_stream.synchronize()

    def load_recorded(self, paths: list[str]) -> None:
        """Stage into fresh device tensors the compute stream will use later."""
        for name, w in stream_checkpoint(paths):
            with torch.cuda.stream(self.copy_stream):
                dev = w.to(self.device, non_blocking=True)
            dev.record_stream(self.compute_stream)
            self.staged[name] = dev

    def load_windowed(self, paths: list[str]) -> None:
        inflight: collections.deque[torch.cuda.Event] = collections.deque()
        for name, w in stream_checkpoint(paths):
            self.params[name].data.copy_(w, non_blocking=True)
            done = torch.cuda.Event()
            done.record()
            inflight.append(done)
            if len(inflight) >= COPY_WINDOW:
                inflight.popleft().synchronize()
        while inflight:
            inflight.popleft().synchronize()

    def load_windowed_drained(self, paths: list[str]) -> None:
        inflight: collections.deque[torch.cuda.Event] = collections.deque()
        for name, w in stream_checkpoint(paths):
            self.params[name].data.copy_(w, non_blocking=True)
            done = torch.cuda.Event()
            done.record()
            inflight.append(done)
            while inflight:
                inflight.popleft().synchronize()

    def load_double_buffered(self, paths: list[str]) -> None:
        """Copy each tensor into one of two pinned stages the stager owns, then upload from it."""
        for i, (name, w) in enumerate(stream_checkpoint(paths)):
            slot = i % 2
            self.stage_events[slot].synchronize()
            stage = self.stages[slot][: w.numel()].view_as(w)
            stage.copy_(w)
            self.params[name].data.copy_(stage, non_blocking=True)
            self.stage_events[slot].record()

    def load_helper(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            self.params[name].data = to_device_async(w, self.device)

    def load_helper_fenced(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            self.params[name].data = to_device_fenced(w, self.device)

    def keep_tied(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            if name.endswith("embed_tokens.weight"):
                self.tied[name] = w.detach()

    def keep_tied_copied(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            if name.endswith("embed_tokens.weight"):
                self.tied[name] = w.detach().clone()

    def keep_norms(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            if name.endswith("norm.weight"):
                self.fp32_norms[name] = w.contiguous()

    def keep_norms_fp32(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            if name.endswith("norm.weight"):
                self.fp32_norms[name] = w.to(torch.float32, copy=True)

    def verify(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            fut: Future[tuple[str, int]] = self.pool.submit(checksum, name, w)
            fut.add_done_callback(lambda f: self.sums.__setitem__(*f.result()))

    def verify_waited(self, paths: list[str]) -> None:
        for name, w in stream_checkpoint(paths):
            fut: Future[tuple[str, int]] = self.pool.submit(checksum, name, w)
            if fut.exception() is None:
                self.sums.__setitem__(*fut.result())
