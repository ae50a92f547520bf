"""How the engine builds its InstantTensor readers."""

from __future__ import annotations

import os
from typing import NamedTuple

from instanttensor import safe_open


class ReaderConfig(NamedTuple):
    device: int = 0
    copy: bool = False  # zero-copy by default: the fast path the benchmarks were run with


def open_reader(files: list[str], device: int, zero_copy: bool = False) -> safe_open:
    return safe_open(files, framework="pt", device=device, copy=not zero_copy)


class CheckpointReader:
    @classmethod
    def zero_copy(cls, files: list[str], device: int = 0) -> safe_open:
        return safe_open(files, framework="pt", device=device, copy=False)

    @classmethod
    def owned(cls, files: list[str], device: int = 0) -> safe_open:
        return safe_open(files, framework="pt", device=device)


def env_reader(files: list[str], device: int = 0) -> safe_open:
    # ITLOAD_COPY=1 asks for owned tensors; unset, the reader lends views of its ring buffer.
    return safe_open(files, framework="pt", device=device, copy=os.environ.get("ITLOAD_COPY", "0") == "1")
