"""How adapters are opened: InstantTensor for GPU-direct reads, safetensors' mmap for the rest."""

from __future__ import annotations

from dataclasses import dataclass

import instanttensor


@dataclass
class ReaderSpec:
    files: list[str]
    device: int = 0
    zero_copy: bool = True

    def open(self) -> instanttensor.safe_open:
        return instanttensor.safe_open(self.files, framework="pt", device=self.device, copy=not self.zero_copy)
