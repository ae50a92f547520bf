"""A training loop fed through the staging helpers."""

from __future__ import annotations

from typing import Callable, Iterable

import numpy as np
import torch

from staging.uploader import FencedUploader, Uploader


def train(step: Callable[[torch.Tensor], None], batches: Iterable[np.ndarray], capacity: int, fenced: bool) -> None:
    device = torch.device("cuda", torch.cuda.current_device())
    up = FencedUploader(capacity, device) if fenced else Uploader(capacity, device)
    for arr in batches:
        step(up.upload(arr))
