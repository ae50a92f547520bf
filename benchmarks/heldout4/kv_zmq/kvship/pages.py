"""Serialise KV-cache pages for disaggregated prefill -> decode transfer."""

from __future__ import annotations

import struct

import numpy as np

_HEADER = struct.Struct("<IIQ")


class PageExporter:
    """Writes each page into one staging buffer that is reused for the next page."""

    def __init__(self, page_bytes: int) -> None:
        self._staging = bytearray(_HEADER.size + page_bytes)

    def export(self, layer: int, page_id: int, page: np.ndarray) -> memoryview:
        raw = page.reshape(-1).view(np.uint8)
        _HEADER.pack_into(self._staging, 0, layer, page_id, raw.nbytes)
        self._staging[_HEADER.size : _HEADER.size + raw.nbytes] = raw.tobytes()
        return memoryview(self._staging)[: _HEADER.size + raw.nbytes]
