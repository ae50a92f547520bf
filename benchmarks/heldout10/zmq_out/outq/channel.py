"""A PUSH socket to the frontend process."""

from __future__ import annotations

import contextlib
import time
from typing import Iterator

import zmq


class Channel:
    def __init__(self, ctx: zmq.Context, addr: str) -> None:
        self.sock = ctx.socket(zmq.PUSH)
        self.sock.connect(addr)

    def push(self, payload) -> None:
        """Zero-copy: libzmq's I/O thread reads the payload after this returns."""
        self.sock.send(payload, copy=False)

    def push_tracked(self, payload) -> zmq.MessageTracker:
        return self.sock.send(payload, copy=False, track=True)


def await_sent(tracker: zmq.MessageTracker) -> None:
    """Spins until libzmq has released the message (sends are short)."""
    while not tracker.done:
        time.sleep(0)


@contextlib.contextmanager
def awaiting(tracker: zmq.MessageTracker) -> Iterator[zmq.MessageTracker]:
    """Waits for libzmq to release the message when the block ends."""
    try:
        yield tracker
    finally:
        tracker.wait()
