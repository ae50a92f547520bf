"""Publishes a checkpoint file bucket by bucket to every rollout worker."""

from __future__ import annotations

import queue
import threading
from typing import BinaryIO

import zmq

from bucketpub.framing import header


class BucketPublisher:
    def __init__(self, sock: zmq.Socket, bucket_bytes: int) -> None:
        self.sock = sock
        self.bucket = bytearray(bucket_bytes)
        self.ring = [bytearray(bucket_bytes), bytearray(bucket_bytes)]
        self.outbox: "queue.Queue[memoryview | bytes | None]" = queue.Queue()
        self.sender = threading.Thread(target=self._send_loop, daemon=True)
        self.sender.start()

    def _send_loop(self) -> None:
        while (frame := self.outbox.get()) is not None:
            self.sock.send(frame, copy=False)

    def publish_untracked(self, f: BinaryIO) -> None:
        while n := f.readinto(self.bucket):
            self.sock.send(memoryview(self.bucket)[:n], copy=False)

    def publish_tracked(self, f: BinaryIO) -> None:
        while n := f.readinto(self.bucket):
            tracker = self.sock.send(memoryview(self.bucket)[:n], copy=False, track=True)
            tracker.wait()

    def publish_framed(self, f: BinaryIO) -> None:
        index = 0
        while n := f.readinto(self.bucket):
            self.sock.send_multipart([header(index, n), memoryview(self.bucket)[:n]], copy=False, track=True).wait()
            index += 1

    def publish_waited_at_end(self, f: BinaryIO) -> None:
        trackers: list[zmq.MessageTracker] = []
        while n := f.readinto(self.bucket):
            trackers.append(self.sock.send(memoryview(self.bucket)[:n], copy=False, track=True))
        for t in trackers:
            t.wait()

    def publish_copied(self, f: BinaryIO) -> None:
        while n := f.readinto(self.bucket):
            self.sock.send(memoryview(self.bucket)[:n], copy=True)

    def publish_double_buffered(self, f: BinaryIO) -> None:
        pending: list[zmq.MessageTracker | None] = [None, None]
        i = 0
        while True:
            k = i % 2
            if pending[k] is not None:
                pending[k].wait()
            n = f.readinto(self.ring[k])
            if not n:
                break
            pending[k] = self.sock.send(memoryview(self.ring[k])[:n], copy=False, track=True)
            i += 1

    def publish_double_buffered_other(self, f: BinaryIO) -> None:
        pending: list[zmq.MessageTracker | None] = [None, None]
        i = 0
        while True:
            k = i % 2
            if pending[1 - k] is not None:
                pending[1 - k].wait()
            n = f.readinto(self.ring[k])
            if not n:
                break
            pending[k] = self.sock.send(memoryview(self.ring[k])[:n], copy=False, track=True)
            i += 1

    def publish_double_buffered_polled(self, f: BinaryIO) -> None:
        pending: list[zmq.MessageTracker | None] = [None, None]
        i = 0
        while True:
            k = i % 2
            tracker = pending[k]
            if tracker is not None and tracker.done:
                pending[k] = None
            n = f.readinto(self.ring[k])
            if not n:
                break
            pending[k] = self.sock.send(memoryview(self.ring[k])[:n], copy=False, track=True)
            i += 1

    def publish_via_sender(self, f: BinaryIO) -> None:
        while n := f.readinto(self.bucket):
            self.outbox.put(memoryview(self.bucket)[:n])

    def publish_via_sender_copied(self, f: BinaryIO) -> None:
        while n := f.readinto(self.bucket):
            self.outbox.put(bytes(self.bucket[:n]))
