"""Staging rings: each streamed tensor is copied into a pinned slot, then uploaded from there."""

from __future__ import annotations

import torch

from ringload.stream import stream_shards

SLOT_NUMEL = 64 << 20


class RingUploader:
    def __init__(self, slots: int = 2) -> None:
        self.slots = [torch.empty(SLOT_NUMEL, dtype=torch.bfloat16, pin_memory=True) for _ in range(slots)]

    def load(self, model: torch.nn.Module, files: list[str]) -> None:
        params = dict(model.named_parameters())
        for i, (name, w) in enumerate(stream_shards(files)):
            slot = self.slots[i % len(self.slots)]
            n = w.numel()
            slot.narrow(0, 0, n).copy_(w.view(-1))
            params[name].data.view(-1).copy_(slot.narrow(0, 0, n), non_blocking=True)
        torch.cuda.synchronize()


class FencedRingUploader(RingUploader):
    def __init__(self, slots: int = 2) -> None:
        super().__init__(slots)
        self.events = [torch.cuda.Event() for _ in range(slots)]

    def load(self, model: torch.nn.Module, files: list[str]) -> None:
        params = dict(model.named_parameters())
        for i, (name, w) in enumerate(stream_shards(files)):
            j = i % len(self.slots)
            self.events[j].synchronize()
            n = w.numel()
            self.slots[j].narrow(0, 0, n).copy_(w.view(-1))
            params[name].data.view(-1).copy_(self.slots[j].narrow(0, 0, n), non_blocking=True)
            self.events[j].record()
        torch.cuda.synchronize()


def load_two_slots_sync_every_two(model: torch.nn.Module, files: list[str]) -> None:
    slots = [torch.empty(SLOT_NUMEL, dtype=torch.bfloat16, pin_memory=True) for _ in range(2)]
    params = dict(model.named_parameters())
    for i, (name, w) in enumerate(stream_shards(files)):
        if i % 2 == 0:
            torch.cuda.synchronize()
        n = w.numel()
        slots[i % 2][:n] = w.view(-1)
        params[name].data.view(-1).copy_(slots[i % 2][:n], non_blocking=True)


def load_two_slots_sync_every_four(model: torch.nn.Module, files: list[str]) -> None:
    slots = [torch.empty(SLOT_NUMEL, dtype=torch.bfloat16, pin_memory=True) for _ in range(2)]
    params = dict(model.named_parameters())
    for i, (name, w) in enumerate(stream_shards(files)):
        if i % 4 == 0:
            torch.cuda.synchronize()
        n = w.numel()
        slots[i % 2][:n] = w.view(-1)
        params[name].data.view(-1).copy_(slots[i % 2][:n], non_blocking=True)
