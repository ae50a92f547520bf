"""Step outputs as the rollout workers see them."""

from dataclasses import dataclass

import torch

CPU = torch.device("cpu")


@dataclass(frozen=True)
class SamplerConfig:
    overlap: bool = True
    eos_id: int = 2


@dataclass
class SampleOutput:
    ids: torch.Tensor
    logprobs: torch.Tensor


def fetch_output(next_ids: torch.Tensor, logprobs: torch.Tensor, cfg: SamplerConfig) -> SampleOutput:
    return SampleOutput(
        ids=next_ids.to(CPU, non_blocking=cfg.overlap),
        logprobs=logprobs.to(CPU, non_blocking=cfg.overlap),
    )
