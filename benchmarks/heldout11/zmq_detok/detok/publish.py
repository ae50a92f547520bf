"""Publishers of output frames to the detokenizer processes."""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any, Iterable

import zmq

from detok.frames import FrameWriter


@dataclass
class SendStats:
    sent: int = 0
    pending: int = 0


def publish_peek(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any], stats: SendStats) -> None:
    for out in batches:
        view = writer.write_batch(out)
        tracker = sock.send(view, copy=False, track=True)
        if not tracker.done:
            stats.pending += 1
        stats.sent += 1


def publish_spin(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any], stats: SendStats) -> None:
    for out in batches:
        view = writer.write_batch(out)
        tracker = sock.send(view, copy=False, track=True)
        while not tracker.done:
            time.sleep(0)
        stats.sent += 1


def publish_frames_late(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    inflight: list[zmq.MessageTracker] = []
    for out in batches:
        view = writer.write_batch(out)
        sock.send(frame := zmq.Frame(view, track=True), copy=False)
        inflight.append(frame.tracker)
    for tracker in inflight:
        tracker.wait()


def publish_frames(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    for out in batches:
        view = writer.write_batch(out)
        sock.send(frame := zmq.Frame(view, track=True), copy=False)
        frame.tracker.wait()


def fan_out(primary: zmq.Socket, mirror: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    for out in batches:
        view = writer.write_batch(out)
        t_primary = primary.send(view, copy=False, track=True)
        t_mirror = mirror.send(view, copy=False, track=True)
        zmq.MessageTracker(t_primary, t_mirror).wait()


def fan_out_primary_only(primary: zmq.Socket, mirror: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    for out in batches:
        view = writer.write_batch(out)
        t_primary = primary.send(view, copy=False, track=True)
        mirror.send(view, copy=False, track=True)
        t_primary.wait()


def publish_lagged_wait(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    prev: zmq.MessageTracker | None = None
    for out in batches:
        view = writer.write_batch(out)
        if prev is not None:
            prev.wait()
        prev = sock.send(view, copy=False, track=True)
    if prev is not None:
        prev.wait()


def publish_wait_before_write(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    prev: zmq.MessageTracker | None = None
    for out in batches:
        if prev is not None:
            prev.wait()
        view = writer.write_batch(out)
        prev = sock.send(view, copy=False, track=True)
    if prev is not None:
        prev.wait()


def publish_body_slice(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    for out in batches:
        view = writer.write_batch(out)
        sock.send(view[8:], copy=False)


def publish_body_bytes(sock: zmq.Socket, writer: FrameWriter, batches: Iterable[Any]) -> None:
    for out in batches:
        view = writer.write_batch(out)
        sock.send(bytes(view), copy=False)
