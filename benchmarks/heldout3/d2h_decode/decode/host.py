"""Device-to-host helpers shared by the scheduler and the detokenizer."""
from __future__ import annotations

import torch

CPU = torch.device("cpu")


def to_host_async(t: torch.Tensor) -> torch.Tensor:
    """Start copying ``t`` to the host; the caller synchronises before reading."""
    return t.to(CPU, non_blocking=True)


def detokenize(ids: torch.Tensor) -> list[int]:
    return [i for i in ids.tolist() if i >= 0]


def detokenize_after_sync(ids: torch.Tensor) -> list[int]:
    torch.cuda.current_stream().synchronize()
    return [i for i in ids.tolist() if i >= 0]
