"""The control pipe next to the shared block: layouts in, releases out."""

from __future__ import annotations

from multiprocessing.connection import Connection
from typing import NamedTuple


class Entry(NamedTuple):
    name: str
    offset: int
    numel: int
    shape: tuple[int, ...]


class BucketChannel:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def await_bucket(self) -> list[Entry] | None:
        """Blocks until the trainer has written a bucket into the block; None after the last one."""
        msg = self.conn.recv()
        return None if msg is None else [Entry(*e) for e in msg]

    def release_bucket(self) -> None:
        """Tells the trainer the block may be overwritten with the next bucket."""
        self.conn.send(b"released")
