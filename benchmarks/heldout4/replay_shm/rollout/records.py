"""Records the collector keeps."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import numpy as np


class Transition(NamedTuple):
    obs: np.ndarray
    action: int
    reward: float


@dataclass
class EpisodeStats:
    length: int = 0
    total_reward: float = 0.0
    first_obs: np.ndarray | None = None
    thumbnails: list[np.ndarray] = field(default_factory=list)
