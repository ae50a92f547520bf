"""Reads fixed-size fp16 logit frames from a TCP peer into one reused buffer."""

from __future__ import annotations

import socket
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch


class FrameSink:
    def __init__(self, sock: socket.socket, frame_bytes: int) -> None:
        self.sock = sock
        self.frame_bytes = frame_bytes
        self._buf = bytearray(frame_bytes)
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.batches: list[torch.Tensor] = []
        self.last_frame: np.ndarray | None = None

    def _score(self, logits: np.ndarray) -> float:
        return float(np.max(logits))

    def score_views(self) -> None:
        while self.sock.recv_into(self._buf, self.frame_bytes, socket.MSG_WAITALL):
            self.pool.submit(self._score, np.frombuffer(self._buf, dtype=np.float16))

    def score_widened(self) -> None:
        while self.sock.recv_into(self._buf, self.frame_bytes, socket.MSG_WAITALL):
            self.pool.submit(self._score, np.frombuffer(self._buf, dtype=np.float16).astype(np.float32))

    def collect_ids(self) -> None:
        while self.sock.recv_into(self._buf, self.frame_bytes, socket.MSG_WAITALL):
            self.batches.append(torch.frombuffer(self._buf, dtype=torch.int32))

    def collect_ids_cloned(self) -> None:
        while self.sock.recv_into(self._buf, self.frame_bytes, socket.MSG_WAITALL):
            self.batches.append(torch.frombuffer(self._buf, dtype=torch.int32).clone())

    def track_last(self) -> None:
        while self.sock.recv_into(self._buf, self.frame_bytes, socket.MSG_WAITALL):
            if self.last_frame is not None and np.array_equal(self.last_frame, np.frombuffer(self._buf, dtype=np.float16)):
                continue
            self.last_frame = np.frombuffer(self._buf, dtype=np.float16)

    def track_last_copied(self) -> None:
        while self.sock.recv_into(self._buf, self.frame_bytes, socket.MSG_WAITALL):
            if self.last_frame is not None and np.array_equal(self.last_frame, np.frombuffer(self._buf, dtype=np.float16)):
                continue
            self.last_frame = np.frombuffer(self._buf, dtype=np.float16).copy()
