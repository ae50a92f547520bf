"""The decode loop's host side."""

from __future__ import annotations

import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch

from sampler import consts
from sampler.d2h import fetch, fetch_async
from sampler.outputs import StepOutput, consume_checked, consume_eager


class HostSide:
    def __init__(self, overlap: bool, vocab: int) -> None:
        self.overlap = overlap
        self.vocab = vocab
        self.stream = torch.cuda.current_stream()
        self.detok = ThreadPoolExecutor(max_workers=1)
        self.step = 0

    def ids_unsynced(self, next_ids: torch.Tensor) -> list[int]:
        ids_cpu = next_ids.to(consts.HOST, non_blocking=True)
        return ids_cpu.tolist()

    def ids_event(self, next_ids: torch.Tensor) -> list[int]:
        host = fetch_async(next_ids)
        copied = torch.cuda.Event()
        copied.record()
        copied.synchronize()
        return host.tolist()

    def ids_device_wait(self, next_ids: torch.Tensor, side: torch.cuda.Stream) -> list[int]:
        host = fetch_async(next_ids)
        copied = torch.cuda.Event()
        copied.record()
        side.wait_event(copied)
        return host.tolist()

    def ids_polled(self, next_ids: torch.Tensor) -> list[int]:
        host = fetch_async(next_ids)
        copied = self.stream.record_event()
        while not copied.query():
            time.sleep(0)
        return host.tolist()

    def ids_blocking_helper(self, next_ids: torch.Tensor) -> list[int]:
        return fetch(next_ids).tolist()

    def ids_flagged(self, next_ids: torch.Tensor) -> list[int]:
        return fetch(next_ids, non_blocking=self.overlap).tolist()

    def top_logprobs(self, logprobs: torch.Tensor, k: int) -> np.ndarray:
        staging = torch.empty(logprobs.shape, dtype=logprobs.dtype, pin_memory=True)
        staging.copy_(logprobs, non_blocking=True)
        return np.argsort(staging.numpy(), axis=-1)[:, -k:]

    def top_logprobs_synced(self, logprobs: torch.Tensor, k: int) -> np.ndarray:
        staging = torch.empty(logprobs.shape, dtype=logprobs.dtype, pin_memory=True)
        staging.copy_(logprobs, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return np.argsort(staging.numpy(), axis=-1)[:, -k:]

    def finished_mask(self, finished: torch.Tensor) -> bool:
        host_done = finished.to("cpu", non_blocking=self.overlap)
        if host_done.all():
            return True
        return False

    def emit(self, next_ids: torch.Tensor, checked: bool) -> list[int]:
        out = StepOutput(token_ids=fetch_async(next_ids), ready=torch.cuda.Event(), step=self.step)
        out.ready.record()
        self.step += 1
        if checked:
            return consume_checked(out)
        return consume_eager(out)

    def detokenize_later(self, next_ids: torch.Tensor) -> None:
        host = fetch_async(next_ids)
        self.detok.submit(self._detok_unsynced, host)

    def detokenize_later_synced(self, next_ids: torch.Tensor) -> None:
        host = fetch_async(next_ids)
        self.detok.submit(self._detok_synced, host)

    def _detok_unsynced(self, ids: torch.Tensor) -> None:
        print(" ".join(str(i) for i in ids.tolist()))

    def _detok_synced(self, ids: torch.Tensor) -> None:
        torch.cuda.synchronize()
        print(" ".join(str(i) for i in ids.tolist()))
