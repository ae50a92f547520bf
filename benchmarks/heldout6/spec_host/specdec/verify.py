"""Verifiers: how many draft tokens each request accepted this step."""

from __future__ import annotations

import logging
import queue
import threading

import numpy as np
import torch
import torch.distributed as dist

from specdec.config import HOST_DEVICE, OVERLAP_D2H
from specdec.hostio import HostFence, to_host

log = logging.getLogger(__name__)


class Verifier:
    def fetch(self, accept_lens: torch.Tensor) -> torch.Tensor:
        return to_host(accept_lens)


class GreedyVerifier(Verifier):
    def max_accept(self, accept_lens: torch.Tensor) -> int:
        lens = self.fetch(accept_lens)
        return int(lens.max())


class SyncVerifier(Verifier):
    def fetch(self, accept_lens: torch.Tensor) -> torch.Tensor:
        host = super().fetch(accept_lens)
        torch.cuda.current_stream().synchronize()
        return host

    def max_accept(self, accept_lens: torch.Tensor) -> int:
        lens = self.fetch(accept_lens)
        return lens.max().item()


def exchange_drafts(drafts: torch.Tensor, send_counts: torch.Tensor, group: dist.ProcessGroup) -> torch.Tensor:
    counts = send_counts.to(HOST_DEVICE, non_blocking=True)
    in_splits = counts.tolist()
    out = torch.empty_like(drafts)
    dist.all_to_all_single(out, drafts, input_split_sizes=in_splits, group=group)
    return out


def exchange_drafts_synced(drafts: torch.Tensor, send_counts: torch.Tensor, group: dist.ProcessGroup) -> torch.Tensor:
    counts_host = send_counts.to(HOST_DEVICE, non_blocking=True)
    torch.cuda.current_stream().synchronize()
    in_splits = counts_host.tolist()
    out = torch.empty_like(drafts)
    dist.all_to_all_single(out, drafts, input_split_sizes=in_splits, group=group)
    return out


def cumulative_logprobs(logprobs: torch.Tensor) -> np.ndarray:
    with HostFence():
        host = to_host(logprobs)
    return np.cumsum(host.numpy())


def first_logprob(logprobs: torch.Tensor) -> float:
    with HostFence():
        host = to_host(logprobs)
        peek = float(host[0])
    return peek


def probs_on_side(probs: torch.Tensor, side: torch.cuda.Stream) -> list[float]:
    with torch.cuda.stream(side):
        host = probs.cpu()
    return host.tolist()


def probs_on_side_overlapped(probs: torch.Tensor, side: torch.cuda.Stream) -> list[float]:
    with torch.cuda.stream(side):
        staged = probs.to(HOST_DEVICE, non_blocking=OVERLAP_D2H)
    torch.cuda.current_stream().synchronize()
    return staged.tolist()


def all_done(done_mask: torch.Tensor) -> bool:
    finished = done_mask.all().to(HOST_DEVICE, non_blocking=True)
    if finished:
        return True
    return False


def all_done_blocking(done_mask: torch.Tensor) -> bool:
    finished_now = to_host(done_mask.all(), non_blocking=False)
    if finished_now:
        return True
    return False


class StepPublisher:
    """Hands each step's accepted lengths to the detokeniser and the metrics log."""

    def __init__(self) -> None:
        self.results: queue.Queue = queue.Queue()

    def publish(self, accept_lens: torch.Tensor) -> None:
        host_ids = to_host(accept_lens)
        self.results.put(host_ids)

    def publish_ready(self, accept_lens: torch.Tensor) -> None:
        host_ids_ready = to_host(accept_lens)
        torch.cuda.synchronize()
        self.results.put(host_ids_ready)

    def log_step(self, step: int, accept_lens: torch.Tensor) -> None:
        lens_host = to_host(accept_lens)
        log.info(f"step {step}: accepted {lens_host}")

    def log_step_waited(self, step: int, accept_lens: torch.Tensor) -> None:
        lens_done = to_host(accept_lens)
        ev = torch.cuda.Event()
        ev.record()
        ev.synchronize()
        log.info(f"step {step}: accepted {lens_done}")

    def _detok(self, lens: torch.Tensor) -> None:
        self.results.put(lens.tolist())

    def _detok_synced(self, lens: torch.Tensor) -> None:
        torch.cuda.synchronize()
        self.results.put(lens.tolist())

    def detok_async(self, accept_lens: torch.Tensor) -> threading.Thread:
        lens = to_host(accept_lens)
        worker = threading.Thread(target=self._detok, args=(lens,))
        worker.start()
        return worker

    def detok_async_synced(self, accept_lens: torch.Tensor) -> threading.Thread:
        lens = to_host(accept_lens)
        worker = threading.Thread(target=self._detok_synced, args=(lens,))
        worker.start()
        return worker
