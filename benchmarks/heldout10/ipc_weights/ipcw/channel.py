"""The control pipe beside the shared block."""

from __future__ import annotations

import dataclasses
from multiprocessing.connection import Connection
from typing import Optional


@dataclasses.dataclass(frozen=True)
class Entry:
    name: str
    start: int
    end: int
    shape: tuple[int, ...]


class BucketChannel:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def next_layout(self) -> Optional[list[Entry]]:
        """Blocks until the trainer has written a bucket; None after the last one."""
        return self.conn.recv()

    def ack_bucket(self) -> None:
        """The trainer overwrites the block with the next bucket after this."""
        self.conn.send(b"ack")
