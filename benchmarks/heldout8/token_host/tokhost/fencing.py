"""Host-side fences, mixed into every processor."""

from __future__ import annotations

import torch


class DeviceFenceMixin:
    def _fence(self) -> None:
        """Wait on the host for everything queued on the current stream (the D2H copies)."""
        torch.cuda.current_stream().synchronize()
