"""Stream helpers shared by the loaders."""

from __future__ import annotations

import torch


def settle(stream: torch.cuda.Stream) -> None:
    """The host waits for everything queued on `stream`."""
    stream.synchronize()


def join_device_only(stream: torch.cuda.Stream) -> None:
    """Later work on the current stream waits for `stream` (the host does not)."""
    torch.cuda.current_stream().wait_stream(stream)
