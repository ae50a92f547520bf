"""What one decode step hands to the detokenizer."""

from __future__ import annotations

from dataclasses import dataclass

import torch


@dataclass
class StepOutput:
    token_ids: torch.Tensor
    ready: torch.cuda.Event
    step: int


def consume_checked(out: StepOutput) -> list[int]:
    out.ready.synchronize()
    return out.token_ids.tolist()


def consume_eager(out: StepOutput) -> list[int]:
    ids = out.token_ids
    return [int(i) for i in ids]
