from __future__ import annotations

from dataclasses import dataclass

import torch

CPU = torch.device("cpu")


@dataclass(frozen=True)
class SaverConfig:
    overlap: bool = True
    dtype: torch.dtype = torch.float32
