"""The framed stream from the prefill node: a 8-byte header, then the payload.

Frames are received into one payload buffer per connection (frames are up to 8 MiB and
arrive at line rate: no allocation per frame).
"""

from __future__ import annotations

import socket
import struct
from collections.abc import Iterator

HEADER = struct.Struct("<IHH")  # payload length, kind, flags
KIND_KV = 1
KIND_HEARTBEAT = 2
KIND_SCALES = 3


class FrameReader:
    def __init__(self, sock: socket.socket, max_frame: int) -> None:
        self._sock = sock
        self._header = bytearray(HEADER.size)
        self._payload = bytearray(max_frame)

    def frames(self) -> Iterator[tuple[int, memoryview]]:
        while True:
            if self._sock.recv_into(self._header, HEADER.size, socket.MSG_WAITALL) < HEADER.size:
                return
            length, kind, _flags = HEADER.unpack_from(self._header)
            self._sock.recv_into(self._payload, length, socket.MSG_WAITALL)
            yield kind, memoryview(self._payload)[:length]
