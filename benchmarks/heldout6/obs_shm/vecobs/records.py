"""What the learner keeps of each step."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Frame:
    step: int
    env: int
    pixels: np.ndarray
