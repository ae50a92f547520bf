"""Pull settings, read from the launcher's JSON."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class PullConfig:
    device: str = "cuda:1"
    debug: bool = False
    workers: int = 4
