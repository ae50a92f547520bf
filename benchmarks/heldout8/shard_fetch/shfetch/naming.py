"""Checkpoint names differ from the module tree's: rename while streaming."""

from collections.abc import Iterable, Iterator

import torch

from shfetch.streams import open_shards


def renamed(
    stream: Iterable[tuple[str, torch.Tensor]], mapping: dict[str, str]
) -> Iterator[tuple[str, torch.Tensor]]:
    for name, w in stream:
        if name.endswith(".inv_freq"):
            continue
        yield mapping.get(name, name), w


def model_weights(files: list[str], mapping: dict[str, str]) -> Iterator[tuple[str, torch.Tensor]]:
    """The stream every loader consumes (three modules from the producer to the loop)."""
    return renamed(open_shards(files), mapping)
