"""Device fences shared by the post-processing paths."""

from __future__ import annotations

import logging

import torch

log = logging.getLogger(__name__)


def fence() -> None:
    torch.cuda.synchronize()


class DeviceFence:
    """Context manager: the host waits for all device work when the block exits."""

    def __init__(self, label: str) -> None:
        self.label = label

    def __enter__(self) -> "DeviceFence":
        return self

    def __exit__(self, *exc: object) -> None:
        torch.cuda.synchronize()
        log.debug("fence %s passed", self.label)
