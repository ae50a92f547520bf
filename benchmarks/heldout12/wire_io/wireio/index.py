"""Builds lookup structures from a record log."""

from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

from wireio.records import RecordReader

log = logging.getLogger(__name__)


class RecordIndex:
    def __init__(self) -> None:
        self.index: dict[int, object] = {}
        self.pool = ThreadPoolExecutor(max_workers=2)

    def _store(self, key: int, data) -> None:
        self.index[key] = bytes(data[:32])

    def _keep(self, key: int, view: memoryview) -> None:
        self.index[key] = view

    def _keep_copy(self, key: int, view: memoryview) -> None:
        self.index[key] = view.tobytes()

    def attach_async(self, reader: RecordReader) -> None:
        reader.on_record(lambda key, view: self.pool.submit(self._store, key, view))

    def attach_async_copied(self, reader: RecordReader) -> None:
        reader.on_record(lambda key, view: self.pool.submit(self._store, key, bytes(view)))

    def attach_keep(self, reader: RecordReader) -> None:
        reader.on_record(self._keep)

    def attach_keep_copy(self, reader: RecordReader) -> None:
        reader.on_record(self._keep_copy)


def load_index(path: str) -> RecordIndex:
    idx = RecordIndex()
    with open(path, "rb") as f:
        reader = RecordReader(f)
        idx.attach_keep_copy(reader)
        log.info("indexed %d records", reader.run())
    return idx
