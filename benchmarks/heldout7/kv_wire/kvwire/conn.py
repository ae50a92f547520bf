"""Socket and spill-file readers that reuse one buffer for every chunk."""

from __future__ import annotations

import mmap
import socket
import struct
from typing import BinaryIO, Iterator

import numpy as np

HEADER = struct.Struct("!IIQ")  # layer, chunk index, payload bytes


class ChunkConn:
    """One TCP connection from a prefill node; every chunk lands in the same bytearray."""

    def __init__(self, sock: socket.socket, max_chunk: int) -> None:
        self.sock = sock
        self._hdr = bytearray(HEADER.size)
        self._buf = bytearray(max_chunk)

    def chunks(self) -> Iterator[tuple[int, int, np.ndarray]]:
        while self.sock.recv_into(self._hdr, HEADER.size, socket.MSG_WAITALL):
            layer, index, nbytes = HEADER.unpack(self._hdr)
            self.sock.recv_into(self._buf, nbytes, socket.MSG_WAITALL)
            yield layer, index, np.frombuffer(self._buf, dtype=np.float16, count=nbytes // 2)


class SpillReader:
    """Reads spilled KV pages back from local NVMe into one anonymous mapping."""

    def __init__(self, page_bytes: int) -> None:
        self.page_bytes = page_bytes
        self._mm = mmap.mmap(-1, page_bytes)

    def pages(self, f: BinaryIO) -> Iterator[memoryview]:
        while f.readinto(self._mm):
            yield memoryview(self._mm)
