"""A tiny in-process pub/sub bus, and the pump that feeds it from a pipe."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable
from typing import BinaryIO

import numpy as np

Handler = Callable[[np.ndarray], None]


class EventBus:
    def __init__(self) -> None:
        self._handlers: dict[str, list[Handler]] = defaultdict(list)

    def subscribe(self, topic: str) -> Callable[[Handler], Handler]:
        def register(fn: Handler) -> Handler:
            self._handlers[topic].append(fn)
            return fn
        return register

    def add(self, topic: str, fn: Handler) -> None:
        self._handlers[topic].append(fn)

    def publish(self, topic: str, payload: np.ndarray) -> None:
        for fn in self._handlers[topic]:
            fn(payload)


class TapPump:
    """Reads fixed-size float32 records from a pipe; each one is published as a view."""

    def __init__(self, pipe: BinaryIO, record_floats: int, bus: EventBus) -> None:
        self.pipe = pipe
        self.bus = bus
        self._buf = bytearray(record_floats * 4)

    def run(self) -> None:
        while self.pipe.readinto(self._buf) == len(self._buf):
            self.bus.publish("act", np.frombuffer(self._buf, dtype=np.float32))
