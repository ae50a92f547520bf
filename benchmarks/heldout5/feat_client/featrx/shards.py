"""Offline shards: records of fixed size read with readinto into one buffer."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np


def iter_records(path: str, rec_bytes: int) -> Iterator[np.ndarray]:
    buf = bytearray(rec_bytes)
    with open(path, "rb", buffering=0) as f:
        while f.readinto(buf) == rec_bytes:
            yield np.frombuffer(buf, dtype=np.float32)


def load_matrix(path: str, rec_bytes: int) -> np.ndarray:
    records = list(iter_records(path, rec_bytes))
    return np.stack(records)


def load_matrix_owned(path: str, rec_bytes: int) -> np.ndarray:
    records = [r.copy() for r in iter_records(path, rec_bytes)]
    return np.stack(records)
