"""Read raw token shards from disk into pinned memory and upload them chunk by chunk."""
from __future__ import annotations

import torch


def upload_shard(path: str, dev: torch.Tensor, chunk: int) -> int:
    pinned = torch.empty(chunk, dtype=torch.uint8, pin_memory=True)
    view = pinned.numpy()
    offset = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            n = f.readinto(view)
            if not n:
                break
            dev[offset : offset + n].copy_(pinned[:n], non_blocking=True)
            offset += n
    return offset


def upload_shard_synced(path: str, dev: torch.Tensor, chunk: int) -> int:
    pinned = torch.empty(chunk, dtype=torch.uint8, pin_memory=True)
    view = pinned.numpy()
    offset = 0
    with open(path, "rb", buffering=0) as f:
        while True:
            torch.cuda.current_stream().synchronize()
            n = f.readinto(view)
            if not n:
                break
            dev[offset : offset + n].copy_(pinned[:n], non_blocking=True)
            offset += n
    return offset
