"""What the relay keeps about frames."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class ScaleRecord:
    layer: int
    scales: np.ndarray
