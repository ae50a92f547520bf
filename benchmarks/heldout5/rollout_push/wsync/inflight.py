"""Wait for every zero-copy send made inside a `with` block."""

from __future__ import annotations

import zmq


class Inflight:
    def __init__(self) -> None:
        self.trackers: list[zmq.MessageTracker] = []

    def add(self, tracker: zmq.MessageTracker) -> zmq.MessageTracker:
        self.trackers.append(tracker)
        return tracker

    def __enter__(self) -> "Inflight":
        return self

    def __exit__(self, *exc: object) -> None:
        for tracker in self.trackers:
            tracker.wait()
        self.trackers.clear()
