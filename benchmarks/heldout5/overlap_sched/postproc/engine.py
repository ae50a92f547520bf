"""The decode loop's host side."""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor

import numpy as np
import torch

from postproc.outputs import DeviceOut, HostOut, to_host, to_host_evented

log = logging.getLogger(__name__)


@torch.compile(dynamic=True)
def sample(logits: torch.Tensor, temperature: float) -> DeviceOut:
    probs = torch.softmax(logits / temperature, dim=-1)
    ids = torch.multinomial(probs, 1).squeeze(-1)
    lp = torch.log(probs.gather(-1, ids[:, None])).squeeze(-1)
    return DeviceOut(ids, lp, ids == 2)


class OverlapEngine:
    def __init__(self, detokenize: Callable[[list[int]], str], overlap: bool = False) -> None:
        self.detokenize = detokenize
        self.overlap = overlap
        self.pool = ThreadPoolExecutor(max_workers=1)
        self.pending: HostOut | None = None

    # -- one step, read at once -------------------------------------------------------------

    def step_ids(self, logits: torch.Tensor) -> list[int]:
        host = to_host(sample(logits, 1.0))
        return host.token_ids.tolist()

    def step_ids_waited(self, logits: torch.Tensor) -> list[int]:
        host = to_host_evented(sample(logits, 1.0))
        host.ready.synchronize()
        return host.token_ids.tolist()

    def step_ids_blocking(self, logits: torch.Tensor) -> list[int]:
        host = to_host(sample(logits, 1.0), non_blocking=False)
        return host.token_ids.tolist()

    def step_ids_configured(self, logits: torch.Tensor) -> list[int]:
        host = to_host(sample(logits, 1.0), non_blocking=self.overlap)
        return host.token_ids.tolist()

    def all_done(self, logits: torch.Tensor) -> bool:
        host = to_host(sample(logits, 1.0))
        return bool(host.finished.all())

    def count_done(self, logits: torch.Tensor) -> int:
        host = to_host_evented(sample(logits, 1.0))
        host.ready.synchronize()
        return int(host.finished.sum())

    def histogram(self, logits: torch.Tensor, vocab: int) -> np.ndarray:
        host = to_host(sample(logits, 1.0))
        return np.bincount(host.token_ids.numpy(), minlength=vocab)

    def trace_step(self, step: int, logits: torch.Tensor) -> HostOut:
        host = to_host(sample(logits, 1.0))
        log.debug(f"step {step}: ids={host.token_ids} lp={host.logprobs}")
        return host

    # -- overlapped: the previous step is read while this one runs ----------------------------

    def step_overlapped(self, logits: torch.Tensor) -> str | None:
        prev, self.pending = self.pending, to_host_evented(sample(logits, 1.0))
        if prev is None:
            return None
        return json.dumps({"ids": prev.token_ids.tolist()})

    def step_overlapped_waited(self, logits: torch.Tensor) -> str | None:
        prev, self.pending = self.pending, to_host_evented(sample(logits, 1.0))
        if prev is None:
            return None
        prev.ready.synchronize()
        return json.dumps({"ids": prev.token_ids.tolist()})

    # -- detokenisation on the worker thread --------------------------------------------------

    def _detok(self, host: HostOut) -> str:
        return self.detokenize(host.token_ids.tolist())

    def _detok_waited(self, host: HostOut) -> str:
        if host.ready is not None:
            host.ready.synchronize()
        return self.detokenize(host.token_ids.tolist())

    def detok_async(self, logits: torch.Tensor) -> Future:
        host = to_host_evented(sample(logits, 1.0))
        return self.pool.submit(self._detok, host)

    def detok_async_waited(self, logits: torch.Tensor) -> Future:
        host = to_host_evented(sample(logits, 1.0))
        return self.pool.submit(self._detok_waited, host)


def make_engine(detokenize: Callable[[list[int]], str]) -> OverlapEngine:
    return OverlapEngine(detokenize, overlap=True)
