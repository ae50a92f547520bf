"""A length-prefixed record log reader that hands each record to registered callbacks."""

from __future__ import annotations

import struct
from typing import BinaryIO, Callable

RecordFn = Callable[[int, memoryview], None]
_LEN = struct.Struct("<IQ")


class RecordReader:
    def __init__(self, f: BinaryIO, max_record: int = 1 << 20) -> None:
        self.f = f
        self._buf = bytearray(max_record)
        self._callbacks: list[RecordFn] = []

    def on_record(self, fn: RecordFn) -> None:
        self._callbacks.append(fn)

    def run(self) -> int:
        count = 0
        hdr = bytearray(_LEN.size)
        while self.f.readinto(hdr) == _LEN.size:
            n, key = _LEN.unpack(hdr)
            view = memoryview(self._buf)[:n]
            self.f.readinto(view)
            for fn in self._callbacks:
                fn(key, view)
            count += 1
        return count
