"""What the sampler hands back for one decode step."""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Iterator

import torch


@dataclasses.dataclass
class StepOutput:
    token_ids: torch.Tensor
    logprobs: torch.Tensor
    finished: torch.Tensor


def fields(out: StepOutput) -> dict[str, torch.Tensor]:
    return {f.name: getattr(out, f.name) for f in dataclasses.fields(out)}


@contextlib.contextmanager
def landed(event: torch.cuda.Event) -> Iterator[None]:
    """Waits on the host for everything recorded before `event`."""
    event.synchronize()
    yield
