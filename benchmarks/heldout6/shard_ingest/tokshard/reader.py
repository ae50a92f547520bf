"""Shard readers: each record is read into the reader's own bytearray and handed out as a view."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import torch


class ShardReader:
    def __init__(self, path: str, record_tokens: int) -> None:
        self.f = open(path, "rb", buffering=0)
        self._chunk = bytearray(record_tokens * 4)

    def records(self) -> Iterator[torch.Tensor]:
        while self.f.readinto(self._chunk) == len(self._chunk):
            yield torch.frombuffer(self._chunk, dtype=torch.int32)


def for_each_record(reader: ShardReader, fn: Callable[[torch.Tensor], object]) -> int:
    n = 0
    for rec in reader.records():
        fn(rec)
        n += 1
    return n
