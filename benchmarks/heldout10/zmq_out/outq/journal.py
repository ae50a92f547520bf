"""What the output thread remembers about frames it has sent (replay, dedup, stats)."""

from __future__ import annotations

import array
import collections
import dataclasses
import io
import zlib
from typing import Iterable, Sequence

import zmq

from outq.codec import HEADER, OutputEncoder


@dataclasses.dataclass
class Sent:
    step: int
    body: object


class Journal:
    def __init__(self, sock: zmq.Socket) -> None:
        self.sock = sock
        self.enc = OutputEncoder()
        self.replay: collections.deque[Sent] = collections.deque(maxlen=8)
        self.headers: dict[int, object] = {}
        self.snapshot: object = None

    def run(self, batches: Iterable[tuple[int, Sequence[int]]]) -> None:
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            self.replay.append(Sent(step, frame))

    def run_compressed(self, batches: Iterable[tuple[int, Sequence[int]]]) -> None:
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            self.replay.append(Sent(step, zlib.compress(frame)))

    def index_headers(self, batches: Iterable[tuple[int, Sequence[int]]]) -> None:
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            self.headers[step] = frame[:HEADER].toreadonly()

    def index_headers_hex(self, batches: Iterable[tuple[int, Sequence[int]]]) -> None:
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            self.headers[step] = frame[:HEADER].hex()

    def keep_last(self, batches: Iterable[tuple[int, Sequence[int]]]) -> None:
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            self.snapshot = frame.cast("B", shape=[len(frame)])

    def keep_last_stream(self, batches: Iterable[tuple[int, Sequence[int]]]) -> None:
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            self.snapshot = io.BytesIO(frame)

    def keep_ids(self, batches: Iterable[tuple[int, Sequence[int]]]) -> list:
        kept = []
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            kept.append(frame[HEADER : HEADER + 4 * len(ids)])
        return kept

    def keep_ids_array(self, batches: Iterable[tuple[int, Sequence[int]]]) -> list:
        kept = []
        for step, ids in batches:
            frame = self.enc.encode_into(step, ids)
            self.sock.send(frame)
            kept.append(array.array("B", frame[HEADER : HEADER + 4 * len(ids)]))
        return kept
