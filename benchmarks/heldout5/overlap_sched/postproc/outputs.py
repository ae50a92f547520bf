"""Step outputs on the device and their host mirrors."""

from __future__ import annotations

from dataclasses import dataclass, replace

import torch

HOST = "cpu"


@dataclass(slots=True)
class DeviceOut:
    token_ids: torch.Tensor
    logprobs: torch.Tensor
    finished: torch.Tensor


@dataclass(slots=True)
class HostOut:
    token_ids: torch.Tensor
    logprobs: torch.Tensor
    finished: torch.Tensor
    ready: torch.cuda.Event | None = None


def to_host(out: DeviceOut, non_blocking: bool = True) -> HostOut:
    return HostOut(
        out.token_ids.to(HOST, non_blocking=non_blocking),
        out.logprobs.to(HOST, non_blocking=non_blocking),
        out.finished.to(HOST, non_blocking=non_blocking),
    )


def to_host_evented(out: DeviceOut) -> HostOut:
    host = to_host(out)
    ev = torch.cuda.Event()
    ev.record()
    return replace(host, ready=ev)
