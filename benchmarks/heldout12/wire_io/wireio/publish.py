"""Publishes packed output batches to the front-end over ZMQ without copying them."""

from __future__ import annotations

import logging
from typing import Iterable

import zmq

from wireio.pack import OutputBatch, TokenPacker

log = logging.getLogger(__name__)
FRAME_CAPACITY = 1 << 20
HEARTBEAT_CAPACITY = 4096


class OutputPublisher:
    def __init__(self, ctx: zmq.Context, endpoint: str) -> None:
        self.sock = ctx.socket(zmq.PUSH)
        self.sock.connect(endpoint)
        self.packer = TokenPacker(FRAME_CAPACITY)
        self.beat_packer = TokenPacker(HEARTBEAT_CAPACITY)

    def publish_wait_first(self, batches: Iterable[OutputBatch]) -> None:
        trackers: list[zmq.MessageTracker] = []
        for batch in batches:
            if trackers:
                trackers[0].wait()
            view = self.packer.pack(batch)
            trackers.append(self.sock.send(view, copy=False, track=True))

    def publish_wait_all(self, batches: Iterable[OutputBatch]) -> None:
        trackers: list[zmq.MessageTracker] = []
        for batch in batches:
            for tracker in trackers:
                tracker.wait()
            trackers.clear()
            view = self.packer.pack(batch)
            trackers.append(self.sock.send(view, copy=False, track=True))

    def publish_untracked(self, batches: Iterable[OutputBatch]) -> None:
        for batch in batches:
            view = self.packer.pack(batch)
            self.sock.send(view, copy=False)

    def heartbeat(self, beats: Iterable[OutputBatch]) -> None:
        """Heartbeats carry no tokens: a packed beat is 16 bytes, far below zmq.COPY_THRESHOLD."""
        for beat in beats:
            view = self.beat_packer.pack(beat)
            self.sock.send(view, copy=False)

    def publish_body_slice(self, batches: Iterable[OutputBatch]) -> None:
        for batch in batches:
            view = self.packer.pack(batch)
            self.sock.send(view[16:], copy=False)

    def publish_body_bytes(self, batches: Iterable[OutputBatch]) -> None:
        for batch in batches:
            view = self.packer.pack(batch)
            self.sock.send(view[16:].tobytes(), copy=False)
        log.debug("published")
