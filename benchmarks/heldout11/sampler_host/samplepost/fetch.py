"""Per-step fetches of sampling results to the host."""

from __future__ import annotations

import io
import queue

import numpy as np
import torch

CPU = torch.device("cpu")
NB = True


def token_histogram(next_ids: torch.Tensor, vocab: int) -> np.ndarray:
    host = next_ids.to("cpu", torch.int32, True)
    return np.bincount(host.numpy(), minlength=vocab)


def token_histogram_synced(next_ids: torch.Tensor, vocab: int) -> np.ndarray:
    host = next_ids.to("cpu", torch.int32, True)
    torch.cuda.synchronize(next_ids.device)
    return np.bincount(host.numpy(), minlength=vocab)


def logprobs_match(logprobs: torch.Tensor, ref: torch.Tensor) -> bool:
    host_lp = torch.empty_like(logprobs, device="cpu", pin_memory=True).copy_(logprobs, non_blocking=True)
    return torch.allclose(host_lp, ref, atol=1e-3)


def logprobs_match_synced(logprobs: torch.Tensor, ref: torch.Tensor) -> bool:
    host_lp = torch.empty_like(logprobs, device="cpu", pin_memory=True).copy_(logprobs, non_blocking=True)
    torch.cuda.current_stream().record_event().synchronize()
    return torch.allclose(host_lp, ref, atol=1e-3)


def ids_blob(next_ids: torch.Tensor) -> bytes:
    host = next_ids.to(CPU, non_blocking=NB)
    return bytes(host.numpy())


def ids_blob_synced(next_ids: torch.Tensor) -> bytes:
    host = next_ids.to(CPU, non_blocking=NB)
    torch.cuda.Stream.synchronize(torch.cuda.current_stream())
    return bytes(host.numpy())


def hand_to_detokenizer(next_ids: torch.Tensor, out: "queue.Queue[torch.Tensor]") -> None:
    host = next_ids.to("cpu", non_blocking=True)
    out.put(host)


def hand_to_detokenizer_synced(next_ids: torch.Tensor, out: "queue.Queue[torch.Tensor]") -> None:
    host = next_ids.to("cpu", non_blocking=True)
    torch.cuda.synchronize()
    out.put(host)


def all_stopped(stop_flags: torch.Tensor) -> bool:
    host_done = torch.Tensor.to(stop_flags, "cpu", non_blocking=True)
    if host_done.eq(1).all():
        return True
    return False


def all_stopped_polled(stop_flags: torch.Tensor) -> bool:
    host_done = torch.Tensor.to(stop_flags, "cpu", non_blocking=True)
    landed = torch.cuda.Event()
    landed.record()
    while not landed.query():
        pass
    if host_done.eq(1).all():
        return True
    return False


def dump_ids(next_ids: torch.Tensor, sink: io.BytesIO) -> None:
    host = next_ids.to("cpu", non_blocking=True)
    np.save(sink, host.numpy())


def dump_ids_blocking(next_ids: torch.Tensor, sink: io.BytesIO) -> None:
    host = next_ids.to("cpu", non_blocking=False)
    np.save(sink, host.numpy())
