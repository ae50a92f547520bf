"""Fixed-size output frames (the frontend reads FRAME bytes per message)."""

from __future__ import annotations

import struct
from typing import Sequence

FRAME = 2 << 20
HEADER = 16


class OutputEncoder:
    def __init__(self) -> None:
        self._buf = bytearray(FRAME)

    def encode_into(self, step: int, token_ids: Sequence[int]) -> memoryview:
        """Writes the step's outputs into the frame and returns a view of the whole frame."""
        struct.pack_into("<QQ", self._buf, 0, step, len(token_ids))
        struct.pack_into(f"<{len(token_ids)}i", self._buf, HEADER, *token_ids)
        return memoryview(self._buf)
