"""Turns one decode step's device outputs into per-request host results."""

from __future__ import annotations

import bisect
import heapq
import math
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from samplehost.sync import DeviceFence, fence

CPU = torch.device("cpu")


def ids_by_request_unsynced(req_ids: list[str], next_ids: torch.Tensor) -> dict[str, int]:
    host = next_ids.to(CPU, non_blocking=True)
    return dict(zip(req_ids, host.tolist()))


def ids_by_request_fenced(req_ids: list[str], next_ids: torch.Tensor) -> dict[str, int]:
    host = next_ids.to(CPU, non_blocking=True)
    fence()
    return dict(zip(req_ids, host.tolist()))


def top_logprobs_unsynced(logprobs: torch.Tensor, k: int) -> list[float]:
    opts = {"device": "cpu", "non_blocking": True}
    host = logprobs.to(**opts)
    return heapq.nlargest(k, host.tolist())


def top_logprobs_polled(logprobs: torch.Tensor, k: int) -> list[float]:
    opts = {"device": "cpu", "non_blocking": True}
    host = logprobs.to(**opts)
    ev = torch.cuda.Event()
    ev.record()
    while not ev.query():
        time.sleep(0)
    return heapq.nlargest(k, host.tolist())


class StopChecker:
    def __init__(self, max_reqs: int) -> None:
        self.stop_host = torch.zeros(max_reqs, dtype=torch.bool, pin_memory=True)
        self.ready = torch.cuda.Event()

    def stopped_event_before(self, finished: torch.Tensor) -> np.ndarray:
        self.ready.record()
        self.stop_host[: finished.numel()].copy_(finished, non_blocking=True)
        self.ready.synchronize()
        return np.flatnonzero(self.stop_host.numpy())

    def stopped_event_after(self, finished: torch.Tensor) -> np.ndarray:
        self.stop_host[: finished.numel()].copy_(finished, non_blocking=True)
        self.ready.record()
        self.ready.synchronize()
        return np.flatnonzero(self.stop_host.numpy())


class SideStreamFetcher:
    def __init__(self) -> None:
        self.d2h = torch.cuda.Stream()

    def best_current_sync(self, scores: torch.Tensor) -> int:
        with torch.cuda.stream(self.d2h):
            host = scores.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return host.argmax().item()

    def best_side_sync(self, scores: torch.Tensor) -> int:
        with torch.cuda.stream(self.d2h):
            host = scores.to("cpu", non_blocking=True)
        self.d2h.synchronize()
        return host.argmax().item()


def total_prob_inside_fence(probs: torch.Tensor) -> float:
    with DeviceFence("probs") as _:
        host = probs.to("cpu", non_blocking=True)
        total = math.fsum(host.tolist())
    return total


def total_prob_after_fence(probs: torch.Tensor) -> float:
    with DeviceFence("probs") as _:
        host = probs.to("cpu", non_blocking=True)
    total = math.fsum(host.tolist())
    return total


def fetch_sorted_lengths(lengths: torch.Tensor) -> tuple[torch.Tensor, torch.cuda.Event]:
    host = torch.sort(lengths).values.to("cpu", non_blocking=True)
    done = torch.cuda.Event()
    done.record()
    return host, done


def bucket_of_unsynced(lengths: torch.Tensor, limit: int) -> int:
    host, done = fetch_sorted_lengths(lengths)
    pos = bisect.bisect_right(host.numpy(), limit)
    done.synchronize()
    return pos


def bucket_of_synced(lengths: torch.Tensor, limit: int) -> int:
    host, done = fetch_sorted_lengths(lengths)
    done.synchronize()
    pos = bisect.bisect_right(host.numpy(), limit)
    return pos


def _histogram(host: torch.Tensor, vocab: int) -> np.ndarray:
    return np.bincount(host.numpy(), minlength=vocab)


def _histogram_after(host: torch.Tensor, vocab: int, done: torch.cuda.Event) -> np.ndarray:
    done.synchronize()
    return np.bincount(host.numpy(), minlength=vocab)


def token_histograms(steps: list[torch.Tensor], vocab: int, pool: ThreadPoolExecutor) -> list:
    futs = []
    for ids in steps:
        host = ids.to("cpu", non_blocking=True)
        futs.append(pool.submit(_histogram, host, vocab))
    return [f.result() for f in futs]


def token_histograms_evented(steps: list[torch.Tensor], vocab: int, pool: ThreadPoolExecutor) -> list:
    futs = []
    for ids in steps:
        host = ids.to("cpu", non_blocking=True)
        done = torch.cuda.Event()
        done.record()
        futs.append(pool.submit(_histogram_after, host, vocab, done))
    return [f.result() for f in futs]
