"""Restoring a checkpoint into live modules, and the state the restorer keeps."""

from __future__ import annotations

import copy
from contextlib import ExitStack

import torch

from ckrest.readers import open_owned, open_streaming
from ckrest.walk import named_tensors

ROPE_KEY = "model.rotary_emb.cache"


class RestoredState:
    """What the restorer keeps besides the parameters: the rotary cache, the loose tensors."""

    def __init__(self, model: torch.nn.Module, device: int) -> None:
        self.model = model
        self.device = device
        self.params = dict(model.named_parameters())
        self.loose: dict[str, torch.Tensor] = {}
        self._rope: torch.Tensor | None = None

    @property
    def rope_cache(self) -> torch.Tensor:
        if self._rope is None:
            raise RuntimeError("checkpoint had no rotary cache")
        return self._rope

    def restore(self, files: list[str]) -> None:
        with open_streaming(files, self.device) as reader:
            for name, t in named_tensors(reader):
                if name == ROPE_KEY:
                    self._rope = t
                elif name in self.params:
                    self.params[name].data.copy_(t)

    def restore_owned(self, files: list[str]) -> None:
        with open_owned(files, self.device) as reader:
            for name, t in named_tensors(reader):
                if name == ROPE_KEY:
                    self._rope = t
                elif name in self.params:
                    self.params[name].data.copy_(t)

    def restore_sharded(self, shard_groups: list[list[str]]) -> None:
        """One reader per shard group, all open together (they share the I/O queue)."""
        with ExitStack() as stack:
            readers = [stack.enter_context(open_streaming(group, self.device)) for group in shard_groups]
            for reader in readers:
                for name, t in named_tensors(reader):
                    if name not in self.params:
                        self.loose[name] = t

    def restore_sharded_copied(self, shard_groups: list[list[str]]) -> None:
        with ExitStack() as stack:
            readers = [stack.enter_context(open_streaming(group, self.device)) for group in shard_groups]
            for reader in readers:
                for name, t in named_tensors(reader):
                    if name not in self.params:
                        self.loose[name] = copy.deepcopy(t)


def snapshot(files: list[str], device: int) -> dict[str, torch.Tensor]:
    with open_streaming(files, device) as reader:
        return dict(named_tensors(reader))


def snapshot_copied(files: list[str], device: int) -> dict[str, torch.Tensor]:
    with open_streaming(files, device) as reader:
        return {name: t.clone() for name, t in named_tensors(reader)}
