"""Receive fixed-size experience records from remote actors over TCP."""
from __future__ import annotations

import socket
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np

RECORD = 4096


def _handle(rec: np.ndarray | bytes) -> None:
    arr = np.frombuffer(rec, dtype=np.uint8) if isinstance(rec, bytes) else rec
    if arr[:4].tobytes() != b"EXP1":
        raise ValueError("bad record header")


def serve(conn: socket.socket, pool: ThreadPoolExecutor) -> None:
    buf = bytearray(RECORD)
    while conn.recv_into(buf, RECORD, socket.MSG_WAITALL):
        pool.submit(_handle, np.frombuffer(buf, dtype=np.uint8))


def serve_copied(conn: socket.socket, pool: ThreadPoolExecutor) -> None:
    buf = bytearray(RECORD)
    while conn.recv_into(buf, RECORD, socket.MSG_WAITALL):
        pool.submit(_handle, bytes(buf))


def serve_threaded(conn: socket.socket) -> None:
    buf = bytearray(RECORD)
    while conn.recv_into(buf, RECORD, socket.MSG_WAITALL):
        worker = threading.Thread(target=_handle, args=(np.frombuffer(buf, dtype=np.uint8),))
        worker.start()
        worker.join(timeout=None)


def batch_records(conn: socket.socket, n: int) -> list[memoryview]:
    buf = bytearray(RECORD)
    out: list[memoryview] = []
    while len(out) < n and conn.recv_into(buf, RECORD, socket.MSG_WAITALL):
        out.append(memoryview(buf))
    return out
