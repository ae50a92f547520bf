"""Bucket headers."""

from __future__ import annotations

import struct

BUCKET = struct.Struct("!IQ")  # bucket index, payload bytes


def header(index: int, nbytes: int) -> bytes:
    return BUCKET.pack(index, nbytes)
