"""Upload settings, read from the deployment's YAML."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UploadConfig:
    device: str = "cuda:0"
    overlap_h2d: bool = True
    layers_per_sync: int = 1


BLOCKING = False
