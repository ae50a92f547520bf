"""Publish engine outputs to the API servers over ZMQ PUB sockets."""
from __future__ import annotations

import threading
import time
from typing import Iterable

import zmq

from .codec import FrameEncoder


class OutputPublisher:
    def __init__(self, ctx: zmq.Context, addr: str) -> None:
        self.sock = ctx.socket(zmq.PUB)
        self.sock.bind(addr)
        self.enc = FrameEncoder()
        self.audit_path = "/var/log/fanout/audit.bin"

    def publish(self, outputs: Iterable[object]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            self.sock.send(frame, copy=False)

    def publish_tracked(self, outputs: Iterable[object]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            tracker = self.sock.send(frame, copy=False, track=True)
            tracker.wait()

    def publish_copied(self, outputs: Iterable[object]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            self.sock.send(frame)

    def publish_topic(self, topic: bytes, outputs: Iterable[object]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            self.sock.send_multipart([topic, frame], copy=False)

    def publish_polled(self, outputs: Iterable[object]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            tracker = self.sock.send(frame, copy=False, track=True)
            while not tracker.done:
                time.sleep(0)

    def publish_counted(self, outputs: Iterable[object], stats: dict[str, int]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            tracker = self.sock.send(frame, copy=False, track=True)
            if not tracker.done:
                stats["pending"] = stats.get("pending", 0) + 1

    def publish_snapshot(self, outputs: Iterable[object]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            self.sock.send(bytes(frame), copy=False)

    def publish_audited(self, outputs: Iterable[object]) -> None:
        for out in outputs:
            frame = self.enc.encode(out)
            self.sock.send(frame)
            threading.Thread(target=self._append_audit, args=(frame,), daemon=True).start()

    def _append_audit(self, frame: memoryview) -> None:
        with open(self.audit_path, "ab") as fh:
            fh.write(frame)
