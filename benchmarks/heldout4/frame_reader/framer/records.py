"""Read fixed-size records from a file through one reused buffer."""

from __future__ import annotations

from typing import BinaryIO, Iterator


def read_records(f: BinaryIO, size: int) -> Iterator[memoryview]:
    buf = bytearray(size)
    while True:
        n = f.readinto(buf)
        if not n:
            return
        yield memoryview(buf)[:n]
