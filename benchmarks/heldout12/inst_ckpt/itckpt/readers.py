"""Reader construction: zero-copy for the hot restore path, owning copies elsewhere."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from instanttensor import safe_open


@dataclass
class ReadOptions:
    device: int = 0
    buffer_size: int = 1 << 30
    extra: dict[str, Any] = field(default_factory=lambda: {"copy": False})


def open_fast(files: list[str], opts: ReadOptions):
    return safe_open(files, framework="pt", device=opts.device, buffer_size=opts.buffer_size, **opts.extra)


def open_owned(files: list[str], opts: ReadOptions):
    return safe_open(files, framework="pt", device=opts.device, buffer_size=opts.buffer_size)


class ReaderFactory:
    zero_copy = True

    def open(self, files: list[str], device: int = 0):
        return safe_open(files, "pt", device, copy=not self.zero_copy)
