"""Wire records: an 8-byte header and a body."""

from __future__ import annotations

import struct
from dataclasses import dataclass

HEADER = struct.Struct("<II")


@dataclass(slots=True)
class Frame:
    kind: int
    body: memoryview | bytes


def parse(view: memoryview) -> Frame:
    kind, length = HEADER.unpack_from(view, 0)
    return Frame(kind=kind, body=view[HEADER.size : HEADER.size + length])
