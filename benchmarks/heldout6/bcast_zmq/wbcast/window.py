"""Trackers of zero-copy sends, waited for as a group."""

from __future__ import annotations

import zmq


class SendWindow:
    def __init__(self) -> None:
        self._trackers: list[zmq.MessageTracker] = []

    def add(self, tracker: zmq.MessageTracker) -> None:
        self._trackers.append(tracker)

    def drain(self) -> None:
        for tracker in self._trackers:
            tracker.wait()
        self._trackers.clear()
