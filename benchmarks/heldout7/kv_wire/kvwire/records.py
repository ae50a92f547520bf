"""Records passed between the receiver and the cache's workers."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np


@dataclass
class KVChunk:
    layer: int
    index: int
    payload: np.ndarray
    tags: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class SpillPage:
    key: str
    data: memoryview | bytes
