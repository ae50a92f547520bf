"""Synchronous pieces the async reload paths run on worker threads."""
from __future__ import annotations

import torch


def assign(param: torch.nn.Parameter, src: torch.Tensor) -> None:
    with torch.no_grad():
        param.data.copy_(src)


class ParamSink:
    """Receives weights on the event loop and copies them into the live model."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.params = dict(model.named_parameters())
        self.received = 0

    async def put_weight(self, name: str, src: torch.Tensor) -> None:
        assign(self.params[name], src)
        self.received += 1
