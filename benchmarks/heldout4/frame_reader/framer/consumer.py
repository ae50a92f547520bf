"""Consume frames from a socket and records from files."""

from __future__ import annotations

import socket
import threading
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import BinaryIO, Callable

import numpy as np

from framer.records import read_records
from framer.wire import Frame, parse


class FrameConsumer:
    def __init__(self, sock: socket.socket, bufsize: int = 1 << 20) -> None:
        self.sock = sock
        self.buf = bytearray(bufsize)
        self.backlog: list[Frame] = []
        self.pool = ThreadPoolExecutor(max_workers=2)

    def pump_backlog(self) -> None:
        while n := self.sock.recv_into(self.buf):
            frame = parse(memoryview(self.buf)[:n])
            if frame.kind == 7:
                self.backlog.append(frame)

    def pump_backlog_owned(self) -> None:
        while n := self.sock.recv_into(self.buf):
            frame = parse(memoryview(self.buf)[:n])
            if frame.kind == 7:
                self.backlog.append(Frame(frame.kind, bytes(frame.body)))

    def pump_threaded(self, handle: Callable[[memoryview], None]) -> None:
        while n := self.sock.recv_into(self.buf):
            threading.Thread(target=handle, args=(memoryview(self.buf)[:n],)).start()

    def pump_threaded_joined(self, handle: Callable[[memoryview], None]) -> None:
        while n := self.sock.recv_into(self.buf):
            worker = threading.Thread(target=handle, args=(memoryview(self.buf)[:n],))
            worker.start()
            worker.join()

    def pump_arrays(self) -> list[np.ndarray]:
        batches = []
        while n := self.sock.recv_into(self.buf):
            batches.append(np.frombuffer(self.buf, dtype=np.uint8, count=n))
        return batches

    def pump_arrays_owned(self) -> list[np.ndarray]:
        batches = []
        while n := self.sock.recv_into(self.buf):
            batches.append(np.frombuffer(self.buf[:n], dtype=np.uint8))
        return batches


def load_all(f: BinaryIO, size: int) -> list[memoryview]:
    return list(read_records(f, size))


def load_all_owned(f: BinaryIO, size: int) -> list[bytes]:
    return [bytes(r) for r in read_records(f, size)]


def checksum_all(f: BinaryIO, size: int, pool: ThreadPoolExecutor) -> list[int]:
    return list(pool.map(zlib.crc32, read_records(f, size)))


def checksum_each(f: BinaryIO, size: int, pool: ThreadPoolExecutor) -> list[int]:
    out = []
    for rec in read_records(f, size):
        out.append(pool.submit(zlib.crc32, rec).result())
    return out


def first_full_record(f: BinaryIO, size: int) -> memoryview | None:
    first = None
    count = 0
    for rec in read_records(f, size):
        count += 1
        if first is None and len(rec) == size:
            first = rec
    print(f"scanned {count} records")
    return first


def first_full_record_owned(f: BinaryIO, size: int) -> bytes | None:
    first = None
    for rec in read_records(f, size):
        if first is None and len(rec) == size:
            first = bytes(rec)
    return first
