"""Walks a reader's tensors, skipping the optimizer's bookkeeping entries."""

from __future__ import annotations

from collections.abc import Iterator

import torch

SKIP_PREFIXES = ("_optim.", "_sched.")


def named_tensors(reader) -> Iterator[tuple[str, torch.Tensor]]:
    for name, tensor in reader.tensors():
        if name.startswith(SKIP_PREFIXES):
            continue
        yield name, tensor
