"""Loader settings."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class UploadConfig:
    device: str = "cuda:0"
    overlap: bool = True
    chunk_mb: int = 64
