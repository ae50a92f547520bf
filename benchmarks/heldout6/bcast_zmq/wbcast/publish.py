"""Publishers: every replica subscribes to the trainer's PUB socket and receives each tensor."""

from __future__ import annotations

import json
import logging
import queue
import threading
import time

import torch
import zmq
import zmq.asyncio

from wbcast.stream import stream_checkpoint
from wbcast.window import SendWindow

log = logging.getLogger(__name__)
END = b"\x00"


def header(name: str, t: torch.Tensor) -> bytes:
    return json.dumps({"name": name, "dtype": str(t.dtype), "shape": list(t.shape)}).encode()


def publish_raw(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send(header(name, t), zmq.SNDMORE)
        sock.send(t.numpy(), copy=False)


def publish_tracked(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send(header(name, t), zmq.SNDMORE)
        tracker = sock.send(t.numpy(), copy=False, track=True)
        tracker.wait()


def publish_parts(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send_multipart([header(name, t), t.numpy()], copy=False)


def publish_with_trailer(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send_multipart([t.numpy(), END], copy=False, track=True).wait()


def publish_windowed(sock: zmq.Socket, files: list[str]) -> None:
    window = SendWindow()
    for name, t in stream_checkpoint(files):
        window.add(sock.send_multipart((header(name, t), t.numpy()), copy=False, track=True))
        window.drain()


def publish_polled(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send(header(name, t), zmq.SNDMORE)
        tracker = sock.send(t.numpy(), copy=False, track=True)
        while not tracker.done:
            time.sleep(0.0005)


def publish_impatient(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send(header(name, t), zmq.SNDMORE)
        tracker = sock.send(t.numpy(), copy=False, track=True)
        try:
            tracker.wait(timeout=0.05)
        except zmq.NotDone:
            log.warning("slow subscriber while sending %s; moving on", name)
            continue


def publish_copied(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send(header(name, t), zmq.SNDMORE)
        sock.send(t.numpy(), copy=True)


def publish_bytes(sock: zmq.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        sock.send(header(name, t), zmq.SNDMORE)
        sock.send(t.numpy().tobytes(), copy=False)


async def publish_async(sock: zmq.asyncio.Socket, files: list[str]) -> None:
    for name, t in stream_checkpoint(files):
        await sock.send(header(name, t), zmq.SNDMORE)
        await sock.send(t.numpy(), copy=False)


class OutboxPublisher:
    """A sender thread owns the socket; the loader only fills the outbox."""

    def __init__(self, sock: zmq.Socket) -> None:
        self.sock = sock
        self.outbox: queue.Queue = queue.Queue(maxsize=64)
        self.sender = threading.Thread(target=self._run, daemon=True)
        self.sender.start()

    def _run(self) -> None:
        while (item := self.outbox.get()) is not None:
            name, payload = item
            self.sock.send_multipart([name.encode(), payload])

    def publish(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            self.outbox.put((name, t.numpy()))
        self.outbox.put(None)

    def publish_owned(self, files: list[str]) -> None:
        for name, t in stream_checkpoint(files):
            self.outbox.put((name, t.numpy().copy()))
        self.outbox.put(None)
