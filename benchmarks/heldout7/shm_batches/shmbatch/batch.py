"""What the trainer keeps of a batch."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(slots=True)
class Batch:
    step: int
    tokens: np.ndarray

    @property
    def n_tokens(self) -> int:
        return int(self.tokens.shape[0])
