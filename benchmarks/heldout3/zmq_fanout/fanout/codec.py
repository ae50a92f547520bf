"""Frame outputs into one reused, pre-registered buffer that the sockets send from."""
from __future__ import annotations

import struct

import msgspec

_HEADER = struct.Struct("!IH")


class FrameEncoder:
    def __init__(self, capacity: int = 1 << 20, schema_version: int = 3) -> None:
        self._buf = bytearray(capacity)
        self._enc = msgspec.msgpack.Encoder()
        self._version = schema_version

    def encode(self, obj: object) -> memoryview:
        """Frame ``obj`` into the shared buffer; the view is valid until the next call."""
        payload = self._enc.encode(obj)
        n = _HEADER.size + len(payload)
        if n > len(self._buf):
            raise ValueError(f"frame of {n} bytes exceeds the {len(self._buf)}-byte buffer")
        _HEADER.pack_into(self._buf, 0, len(payload), self._version)
        self._buf[_HEADER.size : n] = payload
        return memoryview(self._buf)[:n]
