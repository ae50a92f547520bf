"""What the relay remembers between frames: the last frame of each kind, scales, sequence numbers."""

from __future__ import annotations

import copy
import struct
import weakref
from collections.abc import Iterable

import numpy as np

from frelay.metrics import Counted
from frelay.records import ScaleRecord
from frelay.wire import KIND_HEARTBEAT, KIND_SCALES, FrameReader


class FrameIndex:
    def __init__(self, reader: FrameReader, n_layers: int, n_scales: int) -> None:
        self.reader = reader
        self.latest: dict[int, memoryview | bytes] = {}
        self.seqs: list[int] = []
        self.half_rows: list[memoryview] = []
        self.scale_table = np.zeros((n_layers, n_scales), dtype=np.float32)
        self.history: list[ScaleRecord] = []
        self.by_kind: dict[int, list[memoryview | bytes]] = {}

    def track_latest(self) -> None:
        for kind, payload in self.reader.frames():
            self.latest[kind] = payload

    def track_latest_copied(self) -> None:
        for kind, payload in self.reader.frames():
            self.latest[kind] = payload.tobytes()

    def group_by_kind(self) -> int:
        frames = Counted(self.reader.frames())
        for kind, payload in frames:
            self.by_kind.setdefault(kind, []).append(payload)
        return frames.count

    def group_by_kind_copied(self) -> int:
        frames = Counted(self.reader.frames())
        for kind, payload in frames:
            self.by_kind.setdefault(kind, []).append(bytes(payload))
        return frames.count

    def track_sequence(self) -> None:
        for kind, payload in self.reader.frames():
            if kind == KIND_HEARTBEAT:
                self.seqs.append(struct.unpack_from("<Q", payload, 0)[0])

    def collect_half_rows(self) -> None:
        for kind, payload in self.reader.frames():
            if kind != KIND_SCALES:
                self.half_rows.append(payload.cast("H"))

    def fill_scales(self) -> None:
        for layer, (kind, payload) in enumerate(self.reader.frames()):
            if kind == KIND_SCALES:
                np.copyto(self.scale_table[layer], np.frombuffer(payload, dtype=np.float32))

    def record_scales(self) -> None:
        for layer, (kind, payload) in enumerate(self.reader.frames()):
            rec = ScaleRecord(layer, np.frombuffer(payload, dtype=np.float32))
            self.history.append(copy.deepcopy(rec))

    def record_scales_shallow(self) -> None:
        for layer, (kind, payload) in enumerate(self.reader.frames()):
            rec = ScaleRecord(layer, np.frombuffer(payload, dtype=np.float32))
            self.history.append(copy.copy(rec))


class Session:
    """A client session; its tail is flushed when the session object is collected."""

    def __init__(self, sid: int) -> None:
        self.sid = sid


def flush_tail(sid: int, tail: memoryview | bytes) -> None:
    print(f"session {sid}: {len(tail)} tail bytes, checksum {sum(bytes(tail)) & 0xFFFF}")


def bind_tails(reader: FrameReader, sessions: Iterable[Session]) -> None:
    for session, (kind, payload) in zip(sessions, reader.frames()):
        weakref.finalize(session, flush_tail, session.sid, payload)


def bind_tails_copied(reader: FrameReader, sessions: Iterable[Session]) -> None:
    for session, (kind, payload) in zip(sessions, reader.frames()):
        weakref.finalize(session, flush_tail, session.sid, bytes(payload))


def last_heartbeat(reader: FrameReader) -> memoryview | None:
    last = None
    for kind, payload in reader.frames():
        if kind == KIND_HEARTBEAT:
            last = payload
    return last


def last_heartbeat_copied(reader: FrameReader) -> bytes | None:
    last = None
    for kind, payload in reader.frames():
        if kind == KIND_HEARTBEAT:
            last = bytes(payload)
    return last
