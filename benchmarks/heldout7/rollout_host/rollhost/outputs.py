"""Per-step outputs copied back to the host."""

from __future__ import annotations

from dataclasses import dataclass

import torch

from rollhost.devices import to_host, to_host_async


@dataclass
class StepOutput:
    token_ids: torch.Tensor
    logprobs: torch.Tensor
    finished: torch.Tensor


def fetch_async(ids: torch.Tensor, lps: torch.Tensor, fin: torch.Tensor) -> StepOutput:
    return StepOutput(to_host_async(ids), to_host_async(lps), to_host_async(fin))


def fetch_blocking(ids: torch.Tensor, lps: torch.Tensor, fin: torch.Tensor) -> StepOutput:
    return StepOutput(to_host(ids), to_host(lps), to_host(fin))
