"""Senders: one function per transport variant the trainer can be configured with."""

from __future__ import annotations

import multiprocessing as mp
import struct
from multiprocessing.connection import Connection

import msgspec
import numpy as np
import torch
import zmq

from wsync.bucket import BucketPacker, buckets
from wsync.inflight import Inflight

CAPACITY = 256 << 20
HEADER = struct.Struct("<QII")
HEADER_PAGE = 128 << 10  # one fixed-size header page per bucket (the name table follows the struct)


def _groups(model: torch.nn.Module) -> list[list[tuple[str, torch.Tensor]]]:
    return buckets([(n, p.detach().cpu()) for n, p in model.named_parameters()], CAPACITY)


def push_untracked(sock: zmq.Socket, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    for group in _groups(model):
        view = packer.pack(group)
        header = msgspec.msgpack.encode(packer.layout)
        sock.send_multipart([header, view], copy=False)


def push_tracked(sock: zmq.Socket, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    for group in _groups(model):
        view = packer.pack(group)
        sock.send(msgspec.msgpack.encode(packer.layout), zmq.SNDMORE)
        tracker = sock.send(view, copy=False, track=True)
        tracker.wait()


def push_payload_first(sock: zmq.Socket, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    for group in _groups(model):
        view = packer.pack(group)
        tracker = sock.send_multipart((view, b"end"), copy=False, track=True)
        tracker.wait()


def push_guarded(sock: zmq.Socket, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    for group in _groups(model):
        view = packer.pack(group)
        tracker = None
        try:
            tracker = sock.send(view, copy=False, track=True)
        finally:
            if tracker is not None:
                tracker.wait()


def push_batched_wait(sock: zmq.Socket, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    sent = []
    for group in _groups(model):
        view = packer.pack(group)
        sent.append(sock.send(view, copy=False, track=True))
    for tracker in sent:
        tracker.wait()


def push_scoped(sock: zmq.Socket, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    for group in _groups(model):
        view = packer.pack(group)
        with Inflight() as inflight:
            inflight.add(sock.send(view, copy=False, track=True))


def push_headers(sock: zmq.Socket, model: torch.nn.Module, version: int) -> None:
    hdr = bytearray(HEADER_PAGE)
    for index, group in enumerate(_groups(model)):
        struct.pack_into(HEADER.format, hdr, 0, version, index, len(group))
        sock.send(hdr, copy=False)


def push_headers_copied(sock: zmq.Socket, model: torch.nn.Module, version: int) -> None:
    hdr = bytearray(HEADER_PAGE)
    for index, group in enumerate(_groups(model)):
        struct.pack_into(HEADER.format, hdr, 0, version, index, len(group))
        sock.send(hdr)


def push_to_queue(q: mp.Queue, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    for group in _groups(model):
        view = packer.pack(group)
        q.put(np.frombuffer(view, dtype=np.uint8))


def push_to_pipe(conn: Connection, model: torch.nn.Module) -> None:
    packer = BucketPacker(CAPACITY)
    for group in _groups(model):
        view = packer.pack(group)
        conn.send(np.frombuffer(view, dtype=np.uint8))


class Resender:
    """Keeps the last bucket so a rollout engine that missed it can ask again."""

    def __init__(self, sock: zmq.Socket) -> None:
        self.sock = sock
        self.packer = BucketPacker(CAPACITY)
        self.last_sent: memoryview | bytes | None = None
        self.last_copy: bytes | None = None

    def push(self, model: torch.nn.Module) -> None:
        for group in _groups(model):
            view = self.packer.pack(group)
            self.sock.send(view)
            self.last_sent = view

    def push_keeping_copy(self, model: torch.nn.Module) -> None:
        for group in _groups(model):
            view = self.packer.pack(group)
            self.sock.send(view)
            self.last_copy = bytes(view)

    def resend(self) -> None:
        if self.last_sent is not None:
            self.sock.send(self.last_sent)
