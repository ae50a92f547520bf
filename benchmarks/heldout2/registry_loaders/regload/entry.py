"""What the server calls."""
from __future__ import annotations

import torch

from .config import LoadConfig, get_loader


def load_model(model: torch.nn.Module, config: LoadConfig) -> torch.nn.Module:
    loader = get_loader(config)
    try:
        n = loader.load_weights(model, config.files)
    finally:
        loader.close()
    if n == 0:
        raise RuntimeError("no weights loaded")
    return model.eval()
