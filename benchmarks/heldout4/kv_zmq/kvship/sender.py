"""Ship the KV pages of finished prefills to the decode instance."""

from __future__ import annotations

import time
import zlib
from concurrent.futures import ThreadPoolExecutor
from typing import Iterable

import numpy as np
import zmq
import zmq.asyncio

from kvship.pages import PageExporter
from kvship.transport import drain, send_and_wait, send_nowait

Page = tuple[int, int, np.ndarray]


class PageShipper:
    def __init__(self, ctx: zmq.Context, endpoint: str, page_bytes: int) -> None:
        self.sock = ctx.socket(zmq.PUSH)
        self.sock.connect(endpoint)
        self.exporter = PageExporter(page_bytes)
        self.page_bytes = page_bytes
        self.crc_pool = ThreadPoolExecutor(max_workers=2)

    def ship_fast(self, pages: Iterable[Page]) -> None:
        for layer, pid, page in pages:
            frame = self.exporter.export(layer, pid, page)
            self.sock.send(frame, copy=False)

    def ship_waited(self, pages: Iterable[Page]) -> None:
        for layer, pid, page in pages:
            send_and_wait(self.sock, self.exporter.export(layer, pid, page))

    def ship_batched(self, pages: Iterable[Page]) -> None:
        trackers: list[zmq.MessageTracker] = []
        for layer, pid, page in pages:
            trackers.append(send_nowait(self.sock, self.exporter.export(layer, pid, page)))
        drain(trackers)

    def ship_polled(self, pages: Iterable[Page]) -> None:
        for layer, pid, page in pages:
            view = self.exporter.export(layer, pid, page)
            tracker = self.sock.send(view, copy=False, track=True)
            while not tracker.done:
                time.sleep(0)

    def ship_default_copy(self, pages: Iterable[Page]) -> None:
        for layer, pid, page in pages:
            self.sock.send(self.exporter.export(layer, pid, page))

    def ship_with_topic(self, topic: bytes, pages: Iterable[Page]) -> None:
        for layer, pid, page in pages:
            body = self.exporter.export(layer, pid, page)
            tracker = self.sock.send_multipart((topic, body), copy=False, track=True)
            tracker.wait()

    def ship_with_trailer(self, pages: Iterable[Page]) -> None:
        for layer, pid, page in pages:
            body = self.exporter.export(layer, pid, page)
            crc = zlib.crc32(body).to_bytes(4, "little")
            tracker = self.sock.send_multipart([body, crc], copy=False, track=True)
            tracker.wait()

    def ship_fresh_exporter(self, pages: Iterable[Page]) -> None:
        for layer, pid, page in pages:
            one_shot = PageExporter(self.page_bytes)
            self.sock.send(one_shot.export(layer, pid, page), copy=False)

    def checksums(self, pages: Iterable[Page]) -> list[int]:
        sums = []
        for layer, pid, page in pages:
            view = self.exporter.export(layer, pid, page)
            sums.append(self.crc_pool.submit(zlib.crc32, view).result())
        return sums

    def checksums_overlapped(self, pages: Iterable[Page]) -> list[int]:
        futs = [self.crc_pool.submit(zlib.crc32, self.exporter.export(l, p, pg)) for l, p, pg in pages]
        return [f.result() for f in futs]


async def ship_async(ctx: zmq.asyncio.Context, endpoint: str, pages: Iterable[Page], page_bytes: int) -> None:
    sock = ctx.socket(zmq.PUSH)
    sock.connect(endpoint)
    exporter = PageExporter(page_bytes)
    for layer, pid, page in pages:
        await sock.send(exporter.export(layer, pid, page), copy=False)
