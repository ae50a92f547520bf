"""Overlap scheduler: launch step N+1 while step N's token ids travel to the host."""

from typing import Protocol

import numpy as np
import torch

from .records import CPU, SamplerConfig, SampleOutput, fetch_output


class Detokenizer(Protocol):
    def decode(self, ids: list[int]) -> str: ...


class OverlapScheduler:
    def __init__(self, detok: Detokenizer, cfg: SamplerConfig) -> None:
        self.detok = detok
        self.cfg = cfg
        self.pending: torch.Tensor | None = None
        self.copy_done = torch.cuda.Event()

    def launch(self, next_ids: torch.Tensor) -> None:
        self.pending = next_ids.to(CPU, non_blocking=True)
        self.copy_done.record()

    def resolve(self) -> list[str]:
        assert self.pending is not None
        rows = self.pending.tolist()
        return [self.detok.decode(r) for r in rows]

    def resolve_fenced(self) -> list[str]:
        assert self.pending is not None
        self.copy_done.synchronize()
        rows = self.pending.tolist()
        return [self.detok.decode(r) for r in rows]


def finished_rows(next_ids: torch.Tensor, eos_id: int, d2h: torch.cuda.Stream) -> np.ndarray:
    with torch.cuda.stream(d2h):
        host_ids = next_ids.to("cpu", non_blocking=True)
    return np.nonzero(host_ids.numpy() == eos_id)[0]


def finished_rows_synced(next_ids: torch.Tensor, eos_id: int, d2h: torch.cuda.Stream) -> np.ndarray:
    with torch.cuda.stream(d2h):
        host_ids = next_ids.to("cpu", non_blocking=True)
    d2h.synchronize()
    return np.nonzero(host_ids.numpy() == eos_id)[0]


def any_finished(next_ids: torch.Tensor, logprobs: torch.Tensor, cfg: SamplerConfig) -> bool:
    out = fetch_output(next_ids, logprobs, cfg)
    if (out.ids == cfg.eos_id).any():
        return True
    return False


def any_finished_synced(next_ids: torch.Tensor, logprobs: torch.Tensor, cfg: SamplerConfig) -> bool:
    out = fetch_output(next_ids, logprobs, cfg)
    torch.cuda.current_stream().synchronize()
    if (out.ids == cfg.eos_id).any():
        return True
    return False


def greedy_tokens(logits: torch.Tensor) -> np.ndarray:
    host = logits.to("cpu", non_blocking=True)
    return np.argmax(host.numpy(), axis=-1)


def greedy_tokens_blocking(logits: torch.Tensor) -> np.ndarray:
    host = logits.to("cpu")
    return np.argmax(host.numpy(), axis=-1)


def decode_output(detok: Detokenizer, out: SampleOutput) -> list[str]:
    return [detok.decode(row) for row in out.ids.tolist()]
