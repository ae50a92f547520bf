"""Host-to-device copy helpers."""

from __future__ import annotations

import torch


def upload_on(stream: torch.cuda.Stream, dst: torch.Tensor, src: torch.Tensor) -> None:
    """Copy on a side stream and wait for it before returning."""
    with torch.cuda.stream(stream):
        dst.copy_(src, non_blocking=True)
    stream.synchronize()


def upload_fenced(dst: torch.Tensor, src: torch.Tensor) -> torch.cuda.Event:
    dst.copy_(src, non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    return done
