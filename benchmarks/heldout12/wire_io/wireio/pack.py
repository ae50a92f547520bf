"""Packs detokenised outputs into one reusable buffer."""

from __future__ import annotations

import struct
from dataclasses import dataclass

_HDR = struct.Struct("<IIQ")


@dataclass
class OutputBatch:
    step: int
    req_ids: list[int]
    tokens: list[list[int]]


class TokenPacker:
    def __init__(self, capacity: int) -> None:
        self._buf = bytearray(capacity)

    def pack(self, batch: OutputBatch) -> memoryview:
        pos = _HDR.size
        for rid, toks in zip(batch.req_ids, batch.tokens):
            struct.pack_into(f"<QI{len(toks)}I", self._buf, pos, rid, len(toks), *toks)
            pos += 12 + 4 * len(toks)
        _HDR.pack_into(self._buf, 0, batch.step, len(batch.req_ids), pos)
        return memoryview(self._buf)[:pos]
