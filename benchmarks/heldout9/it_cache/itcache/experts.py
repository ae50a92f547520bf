"""Swapping MoE experts in from checkpoint shards."""

import re

import torch

from .open import open_shards

EXPERT = re.compile(r"model\.layers\.(\d+)\.mlp\.experts\.(\d+)\.(\w+)\.weight")


def gather_experts(files: list[str], num_experts: int) -> dict[tuple[int, str], torch.Tensor]:
    groups: dict[tuple[int, str], list[torch.Tensor]] = {}
    stacked: dict[tuple[int, str], torch.Tensor] = {}
    with open_shards(files) as f:
        for name, t in f.tensors():
            m = EXPERT.fullmatch(name)
            if m is None:
                continue
            key = (int(m.group(1)), m.group(3))
            groups.setdefault(key, []).append(t)
            if len(groups[key]) == num_experts:
                stacked[key] = torch.stack(groups.pop(key))
    return stacked


def gather_experts_packed(files: list[str], num_experts: int, shapes: dict[str, tuple[int, int]]) -> dict[tuple[int, str], torch.Tensor]:
    stacked: dict[tuple[int, str], torch.Tensor] = {}
    with open_shards(files) as f:
        for name, t in f.tensors():
            m = EXPERT.fullmatch(name)
            if m is None:
                continue
            key = (int(m.group(1)), m.group(3))
            if key not in stacked:
                stacked[key] = torch.empty(num_experts, *shapes[key[1]], dtype=t.dtype, device=t.device)
            stacked[key][int(m.group(2))] = t
    return stacked


@torch.no_grad()
def swap_in(experts: torch.nn.ModuleList, files: list[str]) -> None:
    with open_shards(files) as f:
        for name, t in f.tensors():
            m = EXPERT.fullmatch(name)
            if m is not None:
                getattr(experts[int(m.group(2))], m.group(3)).weight.set_(t)


def swap_in_copied(experts: torch.nn.ModuleList, files: list[str]) -> None:
    with open_shards(files) as f:
        for name, t in f.tensors():
            m = EXPERT.fullmatch(name)
            if m is not None:
                getattr(experts[int(m.group(2))], m.group(3)).weight.data.copy_(t)
