"""What the publisher remembers of the frames it sent: for resends and for the health probe."""

from __future__ import annotations

import pickle
import struct
from typing import Any, Iterable, Iterator

from detok.frames import FrameWriter


class Journal:
    def __init__(self, writer: FrameWriter) -> None:
        self.writer = writer
        self.last_sent: Any = None
        self.resend: dict[int, Any] = {}
        self.headers: list[Any] = []

    def record_last(self, batches: Iterable[Any]) -> None:
        for out in batches:
            view = self.writer.write_batch(out)
            self.last_sent = view

    def record_last_copy(self, batches: Iterable[Any]) -> None:
        for out in batches:
            view = self.writer.write_batch(out)
            self.last_sent = view.tobytes()

    def keep_for_resend(self, batches: Iterable[tuple[int, Any]]) -> None:
        for seq, out in batches:
            view = self.writer.write_batch(out)
            self.resend[seq] = pickle.PickleBuffer(view)

    def keep_for_resend_copy(self, batches: Iterable[tuple[int, Any]]) -> None:
        for seq, out in batches:
            view = self.writer.write_batch(out)
            self.resend[seq] = bytearray(view)

    def keep_headers_lazy(self, batches: Iterable[Any]) -> None:
        for out in batches:
            view = self.writer.write_batch(out)
            self.headers.append(struct.iter_unpack("<q", view[:64]))

    def keep_headers(self, batches: Iterable[Any]) -> None:
        for out in batches:
            view = self.writer.write_batch(out)
            self.headers.append(struct.unpack_from("<8q", view))

    def header_words(self) -> Iterator[int]:
        for words in self.headers:
            for word in words:
                yield word[0] if isinstance(word, tuple) else word
