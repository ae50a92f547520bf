"""Token sampling output paths: ids and logprobs back to the host."""
from __future__ import annotations

import dataclasses
import logging
from concurrent.futures import Future, ThreadPoolExecutor

import torch

from .transfer import CPU, fetch_async

logger = logging.getLogger(__name__)


@dataclasses.dataclass
class SamplerConfig:
    async_copy: bool = True
    log_every: int = 0


class Sampler:
    def __init__(self, cfg: SamplerConfig) -> None:
        self.cfg = cfg
        self.copy_stream = torch.cuda.Stream()
        self.pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="detok")

    def step_plain(self, next_ids: torch.Tensor) -> list[int]:
        host = fetch_async(next_ids)
        return host.tolist()

    def step_synced(self, next_ids: torch.Tensor) -> list[int]:
        host = next_ids.to(CPU, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return host.tolist()

    def step_event_before(self, next_ids: torch.Tensor) -> list[int]:
        ready = torch.cuda.Event()
        ready.record()
        host = next_ids.to(CPU, non_blocking=True)
        ready.synchronize()
        return host.tolist()

    def step_event_after(self, next_ids: torch.Tensor) -> list[int]:
        host = next_ids.to(CPU, non_blocking=True)
        ready = torch.cuda.Event()
        ready.record()
        ready.synchronize()
        return host.tolist()

    def step_side_stream(self, next_ids: torch.Tensor) -> list[int]:
        self.copy_stream.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.copy_stream):
            host = next_ids.to("cpu", non_blocking=True)
        self.copy_stream.synchronize()
        return host.tolist()

    def step_wait_event(self, next_ids: torch.Tensor) -> list[int]:
        done = torch.cuda.Event()
        with torch.cuda.stream(self.copy_stream):
            host = next_ids.to("cpu", non_blocking=True)
            done.record()
        torch.cuda.current_stream().wait_event(done)
        return host.tolist()

    def step_flagged(self, next_ids: torch.Tensor) -> int:
        host = next_ids.to("cpu", non_blocking=self.cfg.async_copy)
        first = int(host[0])
        return first

    def step_logged(self, logprobs: torch.Tensor) -> torch.Tensor:
        host = logprobs.to(CPU, non_blocking=True)
        logger.info(f"step logprobs: {host}")
        return host

    def step_blocking(self, next_ids: torch.Tensor) -> list[int]:
        host = next_ids.cpu()
        return host.tolist()

    @staticmethod
    def _detokenize(host_ids: torch.Tensor) -> list[int]:
        return host_ids.tolist()

    @staticmethod
    def _detokenize_after(host_ids: torch.Tensor, ready: torch.cuda.Event) -> list[int]:
        ready.synchronize()
        return host_ids.tolist()

    def step_offloaded(self, next_ids: torch.Tensor) -> Future:
        host = next_ids.to("cpu", non_blocking=True)
        return self.pool.submit(self._detokenize, host)

    def step_offloaded_synced(self, next_ids: torch.Tensor) -> Future:
        host = next_ids.to("cpu", non_blocking=True)
        ready = torch.cuda.Event()
        ready.record()
        return self.pool.submit(self._detokenize_after, host, ready)
