"""Device-to-host helpers shared by the verifiers."""

from __future__ import annotations

import torch

from specdec.config import HOST_DEVICE, OVERLAP_D2H


def to_host(t: torch.Tensor, *, non_blocking: bool = OVERLAP_D2H) -> torch.Tensor:
    return t.to(HOST_DEVICE, non_blocking=non_blocking)


class HostFence:
    """Everything issued inside the block is done on the host once the block ends."""

    def __enter__(self) -> "HostFence":
        self.event = torch.cuda.Event()
        return self

    def __exit__(self, *exc) -> None:
        self.event.record()
        self.event.synchronize()
