"""Receivers: each turns buckets of the shared block into the rollout model's weights."""

from __future__ import annotations

from multiprocessing.shared_memory import SharedMemory

import numpy as np
import torch

from rollshm.channel import BucketChannel


def _leaf(model: torch.nn.Module, name: str) -> tuple[torch.nn.Module, str]:
    path, _, leaf = name.rpartition(".")
    return model.get_submodule(path), leaf


def receive_reparam(model: torch.nn.Module, shm: SharedMemory, channel: BucketChannel) -> None:
    for layout in iter(channel.await_bucket, None):
        for e in layout:
            view = torch.frombuffer(shm.buf, dtype=torch.bfloat16, count=e.numel, offset=e.offset).view(e.shape)
            module, leaf = _leaf(model, e.name)
            setattr(module, leaf, torch.nn.Parameter(view, requires_grad=False))
        channel.release_bucket()


def receive_reparam_owned(model: torch.nn.Module, shm: SharedMemory, channel: BucketChannel) -> None:
    for layout in iter(channel.await_bucket, None):
        for e in layout:
            view = torch.frombuffer(shm.buf, dtype=torch.bfloat16, count=e.numel, offset=e.offset).view(e.shape)
            module, leaf = _leaf(model, e.name)
            setattr(module, leaf, torch.nn.Parameter(view.clone(), requires_grad=False))
        channel.release_bucket()


def receive_arrays(arrays: dict[str, np.ndarray], shm: SharedMemory, channel: BucketChannel) -> None:
    while True:
        layout = channel.await_bucket()
        if layout is None:
            break
        for e in layout:
            raw = np.frombuffer(shm.buf, dtype=np.float32, count=e.numel, offset=e.offset)
            arrays[e.name] = raw.astype(np.float32, copy=False).reshape(e.shape)
        channel.release_bucket()


def receive_arrays_owned(arrays: dict[str, np.ndarray], shm: SharedMemory, channel: BucketChannel) -> None:
    while True:
        layout = channel.await_bucket()
        if layout is None:
            break
        for e in layout:
            raw = np.frombuffer(shm.buf, dtype=np.float32, count=e.numel, offset=e.offset)
            arrays[e.name] = raw.astype(np.float32).reshape(e.shape)
        channel.release_bucket()


def receive_flat_rows(flat: dict[str, torch.Tensor], shm: SharedMemory, channel: BucketChannel) -> None:
    for layout in iter(channel.await_bucket, None):
        for e in layout:
            rows, cols = e.shape
            view = torch.frombuffer(shm.buf, dtype=torch.float32, count=e.numel, offset=e.offset)
            flat[e.name] = view.view(rows, cols).flatten()
        channel.release_bucket()


def receive_flat_cols(flat: dict[str, torch.Tensor], shm: SharedMemory, channel: BucketChannel) -> None:
    # The trainer writes this bucket column-major: flatten() of the transposed view copies.
    for layout in iter(channel.await_bucket, None):
        for e in layout:
            rows, cols = e.shape
            view = torch.frombuffer(shm.buf, dtype=torch.float32, count=e.numel, offset=e.offset)
            flat[e.name] = view.view(cols, rows).t().flatten()
        channel.release_bucket()


def receive_experts(experts: dict[str, torch.Tensor], n_experts: int, shm: SharedMemory, channel: BucketChannel) -> None:
    for layout in iter(channel.await_bucket, None):
        for e in layout:
            view = torch.frombuffer(shm.buf, dtype=torch.bfloat16, count=e.numel, offset=e.offset)
            experts[e.name] = view.unflatten(0, (n_experts, -1))
        channel.release_bucket()


def receive_experts_owned(experts: dict[str, torch.Tensor], n_experts: int, shm: SharedMemory, channel: BucketChannel) -> None:
    for layout in iter(channel.await_bucket, None):
        for e in layout:
            view = torch.frombuffer(shm.buf, dtype=torch.bfloat16, count=e.numel, offset=e.offset)
            experts[e.name] = view.unflatten(0, (n_experts, -1)).clone()
        channel.release_bucket()


def receive_packed(pending: list[tuple[str, torch.Tensor]], shm: SharedMemory, channel: BucketChannel) -> None:
    # One packed bucket per step: every entry is a slice of one contiguous range.
    for layout in iter(channel.await_bucket, None):
        start = layout[0].offset
        total = sum(e.numel for e in layout)
        packed = torch.frombuffer(shm.buf, dtype=torch.bfloat16, count=total, offset=start)
        pending.extend(zip([e.name for e in layout], torch.split(packed, [e.numel for e in layout])))
        channel.release_bucket()


def receive_packed_owned(pending: list[tuple[str, torch.Tensor]], shm: SharedMemory, channel: BucketChannel) -> None:
    for layout in iter(channel.await_bucket, None):
        start = layout[0].offset
        total = sum(e.numel for e in layout)
        packed = torch.frombuffer(shm.buf, dtype=torch.bfloat16, count=total, offset=start)
        pending.extend(zip([e.name for e in layout], torch.split(packed.clone(), [e.numel for e in layout])))
        channel.release_bucket()
