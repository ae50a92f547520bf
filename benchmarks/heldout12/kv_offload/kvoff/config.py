from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass(frozen=True)
class TierConfig:
    block_tokens: int = 16
    head_dim: int = 128
    max_blocks_per_step: int = 256
    dtype: torch.dtype = torch.float16
    device: str = "cuda"
