"""Rollout worker loop: sample, bring ids home, detokenize, log."""

import asyncio
import logging

import torch

from .records import CPU, SamplerConfig, fetch_output
from .scheduler import Detokenizer, decode_output

log = logging.getLogger(__name__)


def rollout_texts(detok: Detokenizer, next_ids: torch.Tensor, logprobs: torch.Tensor, cfg: SamplerConfig) -> list[str]:
    out = fetch_output(next_ids, logprobs, cfg)
    return decode_output(detok, out)


def rollout_texts_synced(detok: Detokenizer, next_ids: torch.Tensor, logprobs: torch.Tensor, cfg: SamplerConfig) -> list[str]:
    out = fetch_output(next_ids, logprobs, cfg)
    torch.cuda.synchronize()
    return decode_output(detok, out)


def log_step(step: int, logprobs: torch.Tensor) -> None:
    host_lp = logprobs.to(CPU, non_blocking=True)
    log.info(f"step {step}: mean logprob {host_lp.mean():.3f}")


def log_step_synced(step: int, logprobs: torch.Tensor) -> None:
    host_lp = logprobs.to(CPU, non_blocking=True)
    torch.cuda.current_stream().synchronize()
    log.info(f"step {step}: mean logprob {host_lp.mean():.3f}")


async def stream_tokens(queue: "asyncio.Queue[list[int]]", next_ids: torch.Tensor) -> None:
    host = next_ids.to(CPU, non_blocking=True)
    await asyncio.sleep(0)
    await queue.put(host.tolist())


async def stream_tokens_synced(queue: "asyncio.Queue[list[int]]", next_ids: torch.Tensor) -> None:
    host = next_ids.to(CPU, non_blocking=True)
    await asyncio.to_thread(torch.cuda.synchronize)
    await queue.put(host.tolist())


def first_token(next_ids: torch.Tensor) -> int:
    host = next_ids.cpu()
    return int(host[0])
