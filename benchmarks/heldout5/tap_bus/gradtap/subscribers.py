"""What listens to the taps."""

from __future__ import annotations

import queue
import threading
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import tapwire

from gradtap.bus import EventBus

bus = EventBus()
to_disk: queue.Queue = queue.Queue()


def _disk_writer() -> None:
    with open("/tmp/taps/act.bin", "ab") as f:
        while (item := to_disk.get()) is not None:
            f.write(item if isinstance(item, bytes) else item.tobytes())


threading.Thread(target=_disk_writer, daemon=True).start()


@bus.subscribe("act")
def forward_raw(view: np.ndarray) -> None:
    to_disk.put(view)


@bus.subscribe("act")
def forward_bytes(view: np.ndarray) -> None:
    to_disk.put(view.tobytes())


class LastSeen:
    def __init__(self) -> None:
        self.last: np.ndarray | None = None

    def __call__(self, view: np.ndarray) -> None:
        self.last = view


class Histogram:
    def __init__(self, bins: int = 64) -> None:
        self.bins = bins
        self.counts = np.zeros(bins, dtype=np.int64)

    def __call__(self, view: np.ndarray) -> None:
        self.counts += np.histogram(view, bins=self.bins, range=(-8.0, 8.0))[0]


bus.add("act", LastSeen())
bus.add("act", Histogram())


def write_row(key: str, row: np.ndarray) -> None:
    with open(f"/tmp/taps/{key}.npy", "wb") as f:
        np.save(f, row)


class GradWatcher:
    """Subscribes to tapwire's gradient records."""

    def __init__(self, path: str) -> None:
        self.reader = tapwire.Reader(path)
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.latest: dict[str, np.ndarray] = {}

    def _stash(self, key: str, view: np.ndarray) -> None:
        self.latest[key] = view

    def _stash_copy(self, key: str, view: np.ndarray) -> None:
        self.latest[key] = np.array(view)

    def watch_latest(self) -> None:
        self.reader.on_record(self._stash)

    def watch_latest_owned(self) -> None:
        self.reader.on_record(self._stash_copy)

    def dump_async(self) -> None:
        self.reader.on_record(lambda key, view: self.pool.submit(write_row, key, view))

    def dump_async_copied(self) -> None:
        self.reader.on_record(lambda key, view: self.pool.submit(write_row, key, view.copy()))
