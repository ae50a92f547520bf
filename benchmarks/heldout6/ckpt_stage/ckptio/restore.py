"""Restore: raw tensor bytes read from a checkpoint file into pinned memory, then copied to the GPU."""

from __future__ import annotations

import io

import numpy as np
import torch


def _target(param: torch.Tensor, staging: torch.Tensor, nbytes: int) -> torch.Tensor:
    return staging[:nbytes].view(param.dtype).view(param.shape)


def restore_file(f: io.BufferedReader, params: list[torch.Tensor], max_bytes: int) -> None:
    staging = torch.empty(max_bytes, dtype=torch.uint8, pin_memory=True)
    raw = staging.numpy()
    for param in params:
        nbytes = param.numel() * param.element_size()
        f.readinto(raw[:nbytes])
        param.data.copy_(_target(param, staging, nbytes), non_blocking=True)


def restore_file_fenced(f: io.BufferedReader, params: list[torch.Tensor], max_bytes: int) -> None:
    staging = torch.empty(max_bytes, dtype=torch.uint8, pin_memory=True)
    raw = staging.numpy()
    copied = torch.cuda.Event()
    for param in params:
        nbytes = param.numel() * param.element_size()
        copied.synchronize()
        f.readinto(raw[:nbytes].data)
        param.data.copy_(_target(param, staging, nbytes), non_blocking=True)
        copied.record()


def restore_double_buffered(f: io.BufferedReader, params: list[torch.Tensor], max_bytes: int) -> None:
    slots = [torch.empty(max_bytes, dtype=torch.uint8, pin_memory=True) for _ in range(2)]
    done = [torch.cuda.Event(), torch.cuda.Event()]
    for i, param in enumerate(params):
        nbytes = param.numel() * param.element_size()
        done[i % 2].synchronize()
        np.copyto(slots[i % 2].numpy()[:nbytes], np.fromfile(f, dtype=np.uint8, count=nbytes))
        param.data.copy_(_target(param, slots[i % 2], nbytes), non_blocking=True)
        done[i % 2].record()


def restore_sync_every_4(f: io.BufferedReader, params: list[torch.Tensor], max_bytes: int) -> None:
    pair = [torch.empty(max_bytes, dtype=torch.uint8, pin_memory=True) for _ in range(2)]
    for i, param in enumerate(params):
        nbytes = param.numel() * param.element_size()
        pair[i % 2][:nbytes] = torch.from_numpy(np.fromfile(f, dtype=np.uint8, count=nbytes))
        param.data.copy_(_target(param, pair[i % 2], nbytes), non_blocking=True)
        if i % 4 == 0:
            torch.cuda.synchronize()


def upload_masks(masks: list[torch.Tensor], dev: torch.Tensor, pin: bool) -> None:
    staging = torch.empty(dev.shape, dtype=torch.bool, pin_memory=pin)
    for m in masks:
        staging.copy_(m)
        dev.copy_(staging, non_blocking=True)


def upload_masks_fresh(masks: list[torch.Tensor], dev: torch.Tensor) -> None:
    for m in masks:
        fresh = torch.empty(dev.shape, dtype=torch.bool, pin_memory=True)
        fresh[...] = m
        dev.copy_(fresh, non_blocking=True)


def restore_all(paths: list[str], masks: list[torch.Tensor], dev: torch.Tensor) -> None:
    upload_masks(masks, dev, pin=torch.cuda.is_available())
