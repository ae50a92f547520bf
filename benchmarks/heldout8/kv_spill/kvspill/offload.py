"""Device-to-host spills: KV blocks copied into pinned memory, then written out by the host."""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import torch


class SpillWriter:
    def __init__(self, n_pages: int, page_elems: int, out: io.RawIOBase, device: torch.device) -> None:
        self.host_kv = torch.empty((n_pages, page_elems), dtype=torch.float16, pin_memory=True)
        self._table = torch.empty(n_pages, dtype=torch.int64, pin_memory=True)
        self.out = out
        self.spilled = torch.cuda.Event()
        self.d2h = torch.cuda.Stream(device)
        self.pool = ThreadPoolExecutor(max_workers=4)

    @property
    def page_table(self) -> np.ndarray:
        return self._table.numpy()

    def _write_page(self, page: np.ndarray) -> int:
        return self.out.write(page.tobytes()) or 0

    def spill(self, gpu_kv: torch.Tensor) -> None:
        self.host_kv.copy_(gpu_kv, non_blocking=True)
        self.out.write(self.host_kv.numpy().tobytes())

    def spill_fenced(self, gpu_kv: torch.Tensor) -> None:
        self.host_kv.copy_(gpu_kv, non_blocking=True)
        self.spilled.record()
        self.spilled.synchronize()
        self.out.write(self.host_kv.numpy().tobytes())

    def spill_pages(self, gpu_kv: torch.Tensor) -> None:
        with torch.cuda.stream(self.d2h):
            self.host_kv.copy_(gpu_kv, non_blocking=True)
        torch.cuda.current_stream().wait_stream(self.d2h)
        list(self.pool.map(self._write_page, self.host_kv.numpy()))

    def spill_pages_synced(self, gpu_kv: torch.Tensor) -> None:
        with torch.cuda.stream(self.d2h):
            self.host_kv.copy_(gpu_kv, non_blocking=True)
        self.d2h.synchronize()
        list(self.pool.map(self._write_page, self.host_kv.numpy()))

    def pages_in_use(self, gpu_table: torch.Tensor) -> int:
        self._table.copy_(gpu_table, non_blocking=True)
        return int((self.page_table >= 0).sum())

    def pages_in_use_synced(self, gpu_table: torch.Tensor) -> int:
        self._table.copy_(gpu_table, non_blocking=True)
        torch.cuda.current_stream().synchronize()
        return int((self.page_table >= 0).sum())
