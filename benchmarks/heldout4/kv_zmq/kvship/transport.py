"""Thin helpers over a PUSH socket."""

from __future__ import annotations

import zmq


def send_and_wait(sock: zmq.Socket, payload: memoryview) -> None:
    tracker = sock.send(payload, copy=False, track=True)
    tracker.wait()


def send_nowait(sock: zmq.Socket, payload: memoryview) -> zmq.MessageTracker:
    return sock.send(payload, copy=False, track=True)


def drain(trackers: list[zmq.MessageTracker]) -> None:
    for t in trackers:
        t.wait()
    trackers.clear()
