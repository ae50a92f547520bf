"""Batch prefetchers: one pinned host buffer per prefetcher, refilled by each stage() call."""

from __future__ import annotations

import torch


class Prefetcher:
    def __init__(self, shape: tuple[int, ...], dtype: torch.dtype) -> None:
        self.host = torch.empty(shape, dtype=dtype, pin_memory=True)
        self.dev = torch.empty(shape, dtype=dtype, device="cuda")

    def stage(self, batch: torch.Tensor) -> torch.Tensor:
        self.host.copy_(batch)
        self.dev.copy_(self.host, non_blocking=True)
        return self.dev


class FencedPrefetcher:
    def __init__(self, shape: tuple[int, ...], dtype: torch.dtype) -> None:
        self.host_buf = torch.empty(shape, dtype=dtype, pin_memory=True)
        self.dev = torch.empty(shape, dtype=dtype, device="cuda")
        self.ready = torch.cuda.Event()

    def stage(self, batch: torch.Tensor) -> torch.Tensor:
        self.ready.synchronize()
        self.host_buf.copy_(batch)
        self.dev.copy_(self.host_buf, non_blocking=True)
        self.ready.record()
        return self.dev


def run_epoch(loader, model, shape, dtype) -> None:
    plain = Prefetcher(shape, dtype)
    fenced = FencedPrefetcher(shape, dtype)
    for batch in loader:
        model(plain.stage(batch))
        model(fenced.stage(batch))


def stream_tokens(chunks: list[torch.Tensor], dev: torch.Tensor, copy_stream: torch.cuda.Stream) -> None:
    tok = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    for chunk in chunks:
        torch.cuda.current_stream().wait_stream(copy_stream)
        tok.copy_(chunk)
        with torch.cuda.stream(copy_stream):
            dev.copy_(tok, non_blocking=True)


def stream_tokens_waited(chunks: list[torch.Tensor], dev: torch.Tensor, copy_stream: torch.cuda.Stream) -> None:
    tok_buf = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    for chunk in chunks:
        copy_stream.synchronize()
        tok_buf.copy_(chunk)
        with torch.cuda.stream(copy_stream):
            dev.copy_(tok_buf, non_blocking=True)


def upload_and_reset(tensors: list[torch.Tensor], dev: torch.Tensor) -> None:
    stage = torch.empty(dev.shape, dtype=dev.dtype, pin_memory=True)
    for t in tensors:
        torch.cuda.current_stream().synchronize()
        stage.copy_(t)
        dev.copy_(stage, non_blocking=True)
        stage.fill_(0)
