"""Counting wrappers for the relay's metrics endpoint."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Generic, TypeVar

T = TypeVar("T")


class Counted(Generic[T]):
    """Passes every item of `source` through, counting them."""

    def __init__(self, source: Iterable[T]) -> None:
        self._source = source
        self.count = 0

    def __iter__(self) -> Iterator[T]:
        for item in self._source:
            self.count += 1
            yield item
