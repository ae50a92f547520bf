"""Shard writers run on the saver's thread pool."""

from __future__ import annotations

import safetensors.numpy
import torch


def write_shard(path: str, host: torch.Tensor) -> None:
    # the copy into `host` was issued on the training thread: wait for it before serialising
    torch.cuda.synchronize()
    safetensors.numpy.save_file({"data": host.numpy()}, path)


def write_shard_fast(path: str, host: torch.Tensor) -> None:
    safetensors.numpy.save_file({"data": host.numpy()}, path)
