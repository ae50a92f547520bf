"""Callable statistics objects."""

from __future__ import annotations

from collections import Counter

import numpy as np


class LengthHistogram:
    def __init__(self, bucket: int = 128) -> None:
        self.bucket = bucket
        self.counts: Counter[int] = Counter()
        self.samples: list[np.ndarray] = []

    def __call__(self, doc_id: int, tokens: np.ndarray) -> None:
        self.counts[len(tokens) // self.bucket] += 1
        if doc_id % 1000 == 0:
            self.samples.append(tokens[:32])


class PrefixSampler:
    def __init__(self) -> None:
        self.prefixes: dict[int, np.ndarray] = {}

    def __call__(self, doc_id: int, tokens: np.ndarray) -> None:
        if doc_id % 1000 == 0:
            self.prefixes[doc_id] = tokens[:32].copy()
