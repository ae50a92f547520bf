"""The loop every loader shares; subclasses decide what happens to each tensor."""

from __future__ import annotations

import torch

from ststage.source import stream_checkpoint


class CheckpointLoader:
    def __init__(self, model: torch.nn.Module, device: str = "cuda") -> None:
        self.model = model
        self.device = torch.device(device)
        self.params = dict(model.named_parameters())

    def load(self, paths: list[str]) -> None:
        for name, tensor in stream_checkpoint(paths):
            self.on_tensor(name, tensor)
        self.finish()

    def on_tensor(self, name: str, tensor: torch.Tensor) -> None:
        self.params[name].data.copy_(tensor)

    def finish(self) -> None:
        pass
