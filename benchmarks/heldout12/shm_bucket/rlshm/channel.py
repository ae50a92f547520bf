"""The control channel beside the shared block: layouts in, acknowledgements out."""

from __future__ import annotations

import multiprocessing.connection as mpc
from dataclasses import dataclass


@dataclass(frozen=True)
class Entry:
    name: str
    offset: int
    nbytes: int
    dtype: str
    shape: tuple[int, ...]


class BucketChannel:
    def __init__(self, conn: mpc.Connection) -> None:
        self.conn = conn

    def wait_filled(self) -> list[Entry] | None:
        """Blocks until the learner says the block holds the next bucket; None at the end."""
        msg = self.conn.recv()
        return None if msg is None else [Entry(*e) for e in msg]

    def mark_consumed(self) -> None:
        """Tells the learner it may write the next bucket into the block."""
        self.conn.send(b"ok")
