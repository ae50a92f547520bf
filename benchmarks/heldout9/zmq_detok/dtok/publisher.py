"""Publishing encoded frames to the frontends."""

import logging
from typing import Iterable

import zmq
import zmq.asyncio

from .wire import FrameEncoder, StepOutput

log = logging.getLogger(__name__)
TRAILER = b"\x00END"


def publish_all(sock: zmq.Socket, outputs: Iterable[StepOutput]) -> None:
    enc = FrameEncoder()
    for out in outputs:
        frame = enc.encode(out)
        sock.send(frame, copy=False)


def publish_all_tracked(sock: zmq.Socket, outputs: Iterable[StepOutput]) -> None:
    enc = FrameEncoder()
    for out in outputs:
        frame = enc.encode(out)
        sock.send(frame, copy=False, track=True).wait()


def publish_with_trailer(sock: zmq.Socket, outputs: Iterable[StepOutput]) -> None:
    enc = FrameEncoder()
    for out in outputs:
        frame = enc.encode(out)
        tracker = sock.send_multipart([frame, TRAILER], copy=False, track=True)
        tracker.wait()


def publish_with_topic(sock: zmq.Socket, outputs: Iterable[StepOutput], topic: bytes) -> None:
    enc = FrameEncoder()
    for out in outputs:
        frame = enc.encode(out)
        tracker = sock.send_multipart([topic, frame], copy=False, track=True)
        tracker.wait()


class Publisher:
    def __init__(self, sock: zmq.Socket, timeout: float = 0.5) -> None:
        self.sock = sock
        self.enc = FrameEncoder()
        self.timeout = timeout

    def publish_lenient(self, out: StepOutput) -> None:
        frame = self.enc.encode(out)
        tracker = self.sock.send(frame, copy=False, track=True)
        try:
            tracker.wait(self.timeout)
        except zmq.NotDone:
            log.warning("frame %d still in flight after %.1fs", out.seq, self.timeout)

    def publish_strict(self, out: StepOutput) -> None:
        frame = self.enc.encode(out)
        tracker = self.sock.send(frame, copy=False, track=True)
        tracker.wait(self.timeout)


async def stream_outputs(sock: zmq.asyncio.Socket, outputs: Iterable[StepOutput]) -> None:
    enc = FrameEncoder()
    for out in outputs:
        frame = enc.encode(out)
        await sock.send(frame, copy=False)


async def stream_outputs_copied(sock: zmq.asyncio.Socket, outputs: Iterable[StepOutput]) -> None:
    enc = FrameEncoder()
    for out in outputs:
        frame = enc.encode(out)
        await sock.send(frame)
