"""Output loops: one per deployment mode."""

from __future__ import annotations

from typing import Iterable, Sequence

import zmq

from outq.channel import Channel, await_sent, awaiting
from outq.codec import OutputEncoder

Batch = tuple[int, Sequence[int]]


def publish_batched_wait(sock: zmq.Socket, batches: Iterable[Batch]) -> None:
    enc = OutputEncoder()
    trackers = []
    for step, ids in batches:
        frame = enc.encode_into(step, ids)
        trackers.append(sock.send(frame, copy=False, track=True))
    for tr in trackers:
        tr.wait()


def publish_spin_wait(sock: zmq.Socket, batches: Iterable[Batch]) -> None:
    enc = OutputEncoder()
    for step, ids in batches:
        frame = enc.encode_into(step, ids)
        tracker = sock.send(frame, copy=False, track=True)
        await_sent(tracker)


def publish_channel(chan: Channel, batches: Iterable[Batch]) -> None:
    enc = OutputEncoder()
    for step, ids in batches:
        frame = enc.encode_into(step, ids)
        chan.push(frame)


def publish_channel_copied(chan: Channel, batches: Iterable[Batch]) -> None:
    enc = OutputEncoder()
    for step, ids in batches:
        frame = enc.encode_into(step, ids)
        chan.push(bytes(frame))


def publish_channel_tracked(chan: Channel, batches: Iterable[Batch]) -> int:
    enc = OutputEncoder()
    sent_bytes = 0
    for step, ids in batches:
        frame = enc.encode_into(step, ids)
        with awaiting(chan.push_tracked(frame)) as tracker:
            sent_bytes += len(frame) if tracker is not None else 0
    return sent_bytes


def publish_channel_tracked_checked(chan: Channel, batches: Iterable[Batch]) -> None:
    enc = OutputEncoder()
    for step, ids in batches:
        frame = enc.encode_into(step, ids)
        tracker = chan.push_tracked(frame)
        if not tracker.done:
            print(f"step {step}: frame still queued")


def publish_frames(sock: zmq.Socket, batches: Iterable[Batch]) -> None:
    enc = OutputEncoder()
    for step, ids in batches:
        view = enc.encode_into(step, ids)
        sock.send(zmq.Frame(view))


def publish_frames_copied(sock: zmq.Socket, batches: Iterable[Batch]) -> None:
    enc = OutputEncoder()
    for step, ids in batches:
        view = enc.encode_into(step, ids)
        sock.send(zmq.Frame(view, copy=True))
