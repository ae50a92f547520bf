"""Load-back of KV blocks from the host tier through one pinned stage per layer group."""

from __future__ import annotations

import socket
import struct
from typing import Iterable

import torch


def load_back_indexed(batches: Iterable[tuple[torch.Tensor, torch.Tensor]], dev_kv: torch.Tensor) -> None:
    stage = torch.empty(dev_kv.shape, dtype=dev_kv.dtype, pin_memory=True)
    for idx, rows in batches:
        stage.index_put_((idx,), rows)
        dev_kv.copy_(stage, non_blocking=True)


def load_back_indexed_side(batches: Iterable[tuple[torch.Tensor, torch.Tensor]], dev_kv: torch.Tensor) -> None:
    stage = torch.empty(dev_kv.shape, dtype=dev_kv.dtype, pin_memory=True)
    side = torch.cuda.Stream()
    for idx, rows in batches:
        side.synchronize()
        stage.index_put_((idx,), rows)
        with torch.cuda.stream(side):
            dev_kv.copy_(stage, non_blocking=True)
    side.synchronize()


def load_back_delta_current(bases: list[torch.Tensor], deltas: list[torch.Tensor], dev_kv: torch.Tensor) -> None:
    stage = torch.empty(dev_kv.shape, dtype=dev_kv.dtype, pin_memory=True)
    side = torch.cuda.Stream()
    for base, delta in zip(bases, deltas):
        torch.cuda.current_stream().synchronize()
        torch.add(base, delta, out=stage)
        with torch.cuda.stream(side):
            dev_kv.copy_(stage, non_blocking=True)


def load_back_delta_all(bases: list[torch.Tensor], deltas: list[torch.Tensor], dev_kv: torch.Tensor) -> None:
    stage = torch.empty(dev_kv.shape, dtype=dev_kv.dtype, pin_memory=True)
    side = torch.cuda.Stream()
    for base, delta in zip(bases, deltas):
        torch.cuda.synchronize()
        torch.add(base, delta, out=stage)
        with torch.cuda.stream(side):
            dev_kv.copy_(stage, non_blocking=True)


def load_back_headers_waited(headers: list[tuple[int, int, int, int]], dev_hdr: torch.Tensor) -> None:
    stage = torch.empty(32, dtype=torch.uint8, pin_memory=True)
    raw = stage.numpy()
    done = torch.cuda.Event()
    for hdr in headers:
        done.wait()
        struct.pack_into("<4q", raw, 0, *hdr)
        dev_hdr.copy_(stage, non_blocking=True)
        done.record()


def load_back_headers_synced(headers: list[tuple[int, int, int, int]], dev_hdr: torch.Tensor) -> None:
    stage = torch.empty(32, dtype=torch.uint8, pin_memory=True)
    raw = stage.numpy()
    done = torch.cuda.Event()
    for hdr in headers:
        done.synchronize()
        struct.pack_into("<4q", raw, 0, *hdr)
        dev_hdr.copy_(stage, non_blocking=True)
        done.record()


def load_back_stacked(groups: list[list[torch.Tensor]], shape: tuple[int, int], device: torch.device) -> list[torch.Tensor]:
    stage = torch.empty(shape, dtype=torch.float16, pin_memory=True)
    outs = []
    for chunks in groups:
        torch.stack(chunks, out=stage)
        outs.append(stage.to(device, non_blocking=True))
    torch.cuda.synchronize()
    return outs


def load_back_stacked_fresh(groups: list[list[torch.Tensor]], shape: tuple[int, int], device: torch.device) -> list[torch.Tensor]:
    outs = []
    for chunks in groups:
        stage = torch.empty(shape, dtype=torch.float16, pin_memory=True)
        torch.stack(chunks, out=stage)
        outs.append(stage.to(device, non_blocking=True))
    torch.cuda.synchronize()
    return outs


def receive_blocks(peer: socket.socket, n_blocks: int, dev_blocks: torch.Tensor) -> None:
    stage = torch.empty(dev_blocks.shape[1:], dtype=torch.uint8, pin_memory=True)
    for i in range(n_blocks):
        peer.recv_into(stage.numpy(), stage.numel(), socket.MSG_WAITALL)
        dev_blocks[i].copy_(stage, non_blocking=True)


def receive_blocks_fenced(peer: socket.socket, n_blocks: int, dev_blocks: torch.Tensor) -> None:
    stage = torch.empty(dev_blocks.shape[1:], dtype=torch.uint8, pin_memory=True)
    for i in range(n_blocks):
        torch.cuda.current_stream(dev_blocks.device).synchronize()
        peer.recv_into(stage.numpy(), stage.numel(), socket.MSG_WAITALL)
        dev_blocks[i].copy_(stage, non_blocking=True)
