"""Rollout workers: a base class and the variants the trainer can pick."""

from __future__ import annotations

import asyncio
import logging
import queue

import numpy as np
import torch

from rollhost.outputs import StepOutput, fetch_async, fetch_blocking

log = logging.getLogger(__name__)


class RolloutWorker:
    def __init__(self, max_batch: int) -> None:
        self.detok_q: "queue.Queue[torch.Tensor]" = queue.Queue()
        self.copy_done = torch.cuda.Event()
        self.d2h_stream = torch.cuda.Stream()
        self.host_ids = torch.empty(max_batch, dtype=torch.int64, pin_memory=True)
        self.results: list[list[int]] = []

    def fetch(self, ids: torch.Tensor, lps: torch.Tensor, fin: torch.Tensor) -> StepOutput:
        return fetch_async(ids, lps, fin)

    def step(self, ids: torch.Tensor, lps: torch.Tensor, fin: torch.Tensor) -> None:
        out = self.fetch(ids, lps, fin)
        self.results.append(out.token_ids.tolist())

    def step_synced(self, ids: torch.Tensor, lps: torch.Tensor, fin: torch.Tensor) -> None:
        out = self.fetch(ids, lps, fin)
        torch.cuda.current_stream().synchronize()
        self.results.append(out.token_ids.tolist())

    def step_blocking(self, ids: torch.Tensor, lps: torch.Tensor, fin: torch.Tensor) -> bool:
        out = fetch_blocking(ids, lps, fin)
        return bool(out.finished.all())

    def step_done_early(self, ids: torch.Tensor, lps: torch.Tensor, fin: torch.Tensor) -> bool:
        out = self.fetch(ids, lps, fin)
        return bool(out.finished.all())

    # -- events ----------------------------------------------------------------------------
    def logprob_sum_event_before(self, lps: torch.Tensor) -> float:
        self.copy_done.record()
        host = lps.to("cpu", non_blocking=True)
        self.copy_done.synchronize()
        return float(np.sum(host.numpy()))

    def logprob_sum_event_after(self, lps: torch.Tensor) -> float:
        host = lps.to("cpu", non_blocking=True)
        self.copy_done.record()
        self.copy_done.synchronize()
        return float(np.sum(host.numpy()))

    def logprob_sum_event_wait(self, lps: torch.Tensor) -> float:
        host = lps.to("cpu", non_blocking=True)
        self.copy_done.record()
        self.copy_done.wait()
        return float(np.sum(host.numpy()))

    # -- hand-offs to the detokenizer thread ---------------------------------------------------
    def publish(self, ids: torch.Tensor) -> None:
        host = ids.to("cpu", non_blocking=True)
        self.detok_q.put(host)

    def publish_synced(self, ids: torch.Tensor) -> None:
        host = ids.to("cpu", non_blocking=True)
        self.copy_done.record()
        self.copy_done.synchronize()
        self.detok_q.put(host)

    # -- side stream ---------------------------------------------------------------------------
    def log_lengths_side(self, lens: torch.Tensor) -> None:
        with torch.cuda.stream(self.d2h_stream):
            host_lens = lens.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        log.info(f"sequence lengths {host_lens}")

    def log_lengths_side_synced(self, lens: torch.Tensor) -> None:
        with torch.cuda.stream(self.d2h_stream):
            host_lens = lens.to("cpu", non_blocking=True)
        self.d2h_stream.synchronize()
        log.info(f"sequence lengths {host_lens}")

    # -- pinned destination ------------------------------------------------------------------
    def tokens_into_pinned(self, ids: torch.Tensor) -> list[int]:
        n = ids.shape[0]
        self.host_ids[:n].copy_(ids, non_blocking=True)
        return self.host_ids[:n].tolist()

    def tokens_into_pinned_synced(self, ids: torch.Tensor) -> list[int]:
        n = ids.shape[0]
        self.host_ids[:n].copy_(ids, non_blocking=True)
        torch.cuda.synchronize()
        return self.host_ids[:n].tolist()

    # -- counts used as Python ints ----------------------------------------------------------------
    def accepted_tokens(self, ids: torch.Tensor, n_accepted: torch.Tensor) -> list[int]:
        n_host = n_accepted.to(device="cpu", non_blocking=True)
        return [int(ids[i]) for i in range(int(n_host))]

    def accepted_tokens_blocking(self, ids: torch.Tensor, n_accepted: torch.Tensor) -> list[int]:
        n_host = n_accepted.to(device="cpu", non_blocking=False)
        return [int(ids[i]) for i in range(int(n_host))]
