"""Device-to-host fetches of one step's sampling results."""

from __future__ import annotations

import array
import collections
import json
import logging
import struct

import torch

from samplehost.records import StepOutput, fields, landed

log = logging.getLogger(__name__)


def ids_json(ids: torch.Tensor) -> str:
    host = ids.to(device="cpu", non_blocking=True)
    return json.dumps(host.tolist())


def ids_json_synced(ids: torch.Tensor) -> str:
    host = ids.to(device="cpu", non_blocking=True)
    torch.accelerator.synchronize()
    return json.dumps(host.tolist())


def any_finished(out: StepOutput) -> bool:
    host = {name: t.to("cpu", non_blocking=True) for name, t in fields(out).items()}
    if host["finished"].any():
        return True
    return False


def any_finished_evented(out: StepOutput) -> bool:
    host = {name: t.to("cpu", non_blocking=True) for name, t in fields(out).items()}
    done = torch.cuda.Event()
    done.record()
    with landed(done):
        if host["finished"].any():
            return True
    return False


def packed_ids(ids: torch.Tensor) -> bytes:
    host = ids.to("cpu", non_blocking=True)
    n = host.shape[0]
    return struct.pack(f"<{n}q", *host.tolist())


def packed_ids_synced(ids: torch.Tensor) -> bytes:
    host = ids.to("cpu", non_blocking=True)
    n = host.shape[0]
    torch.cuda.current_stream().synchronize()
    return struct.pack(f"<{n}q", *host.tolist())


def stopped(ids: torch.Tensor, prev: torch.Tensor) -> bool:
    """True when the batch emitted the same tokens as last step (a stuck sampler)."""
    host = ids.to("cpu", non_blocking=True)
    return torch.equal(host, prev)


def stopped_blocking(ids: torch.Tensor, prev: torch.Tensor) -> bool:
    host = ids.to("cpu", non_blocking=False)
    return torch.equal(host, prev)


class Fetcher:
    """Fetches on a dedicated D2H stream so the copy overlaps the next forward."""

    def __init__(self) -> None:
        self.d2h = torch.cuda.Stream()
        self._cpu_like = torch.empty(0, dtype=torch.int64)

    def histogram(self, ids: torch.Tensor) -> collections.Counter:
        host = ids.to(self._cpu_like, non_blocking=True)
        return collections.Counter(host.tolist())

    def histogram_blocking(self, ids: torch.Tensor) -> collections.Counter:
        host = ids.to(self._cpu_like)
        return collections.Counter(host.tolist())

    def as_array(self, ids: torch.Tensor) -> array.array:
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host = ids.to("cpu", non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return array.array("q", host.numpy())

    def as_array_stream_synced(self, ids: torch.Tensor) -> array.array:
        self.d2h.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.d2h):
            host = ids.to("cpu", non_blocking=True)
        self.d2h.synchronize()
        return array.array("q", host.numpy())

    def best_logprob(self, logprobs: torch.Tensor) -> float:
        with torch.cuda.stream(self.d2h):
            host = logprobs.max(dim=-1).values.to("cpu", non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.d2h)
        return float(host.max())

    def best_logprob_checked(self, logprobs: torch.Tensor) -> float:
        with torch.cuda.stream(self.d2h):
            host = logprobs.max(dim=-1).values.to("cpu", non_blocking=True)
            copied = self.d2h.record_event()
        if not copied.query():
            log.debug("d2h copy still running")
        return float(host.max())
