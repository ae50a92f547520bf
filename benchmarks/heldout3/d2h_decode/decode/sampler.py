"""Greedy/top-k sampling step of the decode loop: the tokens go back to the host each step."""
from __future__ import annotations

import logging
from concurrent.futures import ThreadPoolExecutor

import torch

from .host import CPU, detokenize, detokenize_after_sync, to_host_async

log = logging.getLogger(__name__)


class DecodeStep:
    def __init__(self, vocab: int) -> None:
        self.vocab = vocab
        self.pool = ThreadPoolExecutor(max_workers=2, thread_name_prefix="detok")
        self.copy_done = torch.cuda.Event()
        self.side = torch.cuda.Stream()

    def next_tokens(self, logits: torch.Tensor) -> list[int]:
        ids = torch.argmax(logits, dim=-1)
        host = ids.to(CPU, non_blocking=True)
        return host.tolist()

    def next_tokens_synced(self, logits: torch.Tensor) -> list[int]:
        ids = torch.argmax(logits, dim=-1)
        host = ids.to(CPU, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return host.tolist()

    def finished(self, eos_mask: torch.Tensor) -> int:
        self.copy_done.record()
        host_mask = eos_mask.to("cpu", non_blocking=True)
        self.copy_done.synchronize()
        return host_mask.tolist().count(True)

    def finished_synced(self, eos_mask: torch.Tensor) -> int:
        host_mask = eos_mask.to("cpu", non_blocking=True)
        self.copy_done.record()
        self.copy_done.synchronize()
        return host_mask.tolist().count(True)

    def lengths(self, seq_lens: torch.Tensor) -> list[int]:
        host_lens = seq_lens.to("cpu", non_blocking=True)
        self.side.wait_event(self.copy_done)
        return host_lens.tolist()

    def first_token(self, ids: torch.Tensor) -> int:
        host_ids = ids.to("cpu")
        return host_ids[0].item()

    def stream_out(self, logits: torch.Tensor) -> list[int]:
        host = to_host_async(torch.argmax(logits, dim=-1))
        return host.tolist()

    def stream_out_synced(self, logits: torch.Tensor) -> list[int]:
        host = to_host_async(torch.argmax(logits, dim=-1))
        torch.cuda.synchronize()
        return host.tolist()

    def detok_in_background(self, ids: torch.Tensor):
        host = ids.to("cpu", non_blocking=True)
        return self.pool.submit(detokenize, host)

    def detok_in_background_synced(self, ids: torch.Tensor):
        host = ids.to("cpu", non_blocking=True)
        return self.pool.submit(detokenize_after_sync, host)
