"""Restores spilled pages into the in-memory index."""

from __future__ import annotations

from typing import BinaryIO

from kvwire.conn import SpillReader
from kvwire.records import SpillPage


class SpillIndex:
    def __init__(self, reader: SpillReader) -> None:
        self.reader = reader
        self.index: dict[str, SpillPage] = {}

    def restore(self, keys: list[str], f: BinaryIO) -> None:
        for key, page in zip(keys, self.reader.pages(f)):
            self.index[key] = SpillPage(key, page)

    def restore_owned(self, keys: list[str], f: BinaryIO) -> None:
        for key, page in zip(keys, self.reader.pages(f)):
            self.index[key] = SpillPage(key, bytes(page))
