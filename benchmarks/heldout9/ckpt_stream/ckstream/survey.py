"""Checkpoint inspection for the rollout dashboard."""

import heapq

import torch

from .reader import streamed

TOP_K = 8


def largest_tensors(files: list[str]) -> list[tuple[int, str, torch.Tensor]]:
    largest: list[tuple[int, str, torch.Tensor]] = []
    with streamed(files) as tensors:
        for name, w in tensors:
            heapq.heappush(largest, (w.numel(), name, w))
            if len(largest) > TOP_K:
                heapq.heappop(largest)
    return largest


def largest_tensors_owned(files: list[str]) -> list[tuple[int, str, torch.Tensor]]:
    largest: list[tuple[int, str, torch.Tensor]] = []
    with streamed(files) as tensors:
        for name, w in tensors:
            heapq.heappush(largest, (w.numel(), name, w.clone()))
            if len(largest) > TOP_K:
                heapq.heappop(largest)
    return largest


def biggest(files: list[str]) -> tuple[str, torch.Tensor]:
    with streamed(files) as tensors:
        return max(tensors, key=lambda nw: nw[1].numel())


def biggest_size(files: list[str]) -> tuple[str, int]:
    with streamed(files) as tensors:
        return max(((name, w.numel()) for name, w in tensors), key=lambda ns: ns[1])
