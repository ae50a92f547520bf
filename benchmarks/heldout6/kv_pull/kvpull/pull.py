"""The decode worker's pull loops: each copies pages from the ring into its KV cache."""

from __future__ import annotations

import threading
import zlib
from concurrent.futures import Future, ThreadPoolExecutor
from multiprocessing.pool import ThreadPool

import torch
from pagering import PageRing

from kvpull.config import PullConfig


class KVPuller:
    def __init__(self, kv: dict[int, torch.Tensor], cfg: PullConfig) -> None:
        self.kv = kv
        self.cfg = cfg
        self.device = torch.device(cfg.device)
        self.debug = cfg.debug
        self.side = torch.cuda.Stream(device=self.device)
        self.copy_done = torch.cuda.Event()
        self.pool = ThreadPoolExecutor(max_workers=cfg.workers)
        self.tp = ThreadPool(cfg.workers)
        self.pending: dict[int, Future] = {}
        self.crcs: dict[int, int] = {}

    @staticmethod
    def _checksum(page: torch.Tensor) -> int:
        return zlib.crc32(page.numpy().tobytes())

    def _audit(self, page_id: int, page: torch.Tensor) -> None:
        self.crcs[page_id] = self._checksum(page)

    def _settle(self, page_id: int) -> None:
        self.crcs[page_id] = self.pending.pop(page_id).result()

    def _settle_all(self) -> None:
        for page_id in list(self.pending):
            self._settle(page_id)

    def pull(self, ring: PageRing) -> None:
        for page_id, page in ring.pages():
            self.kv[page_id].copy_(page, non_blocking=not self.debug)

    def pull_fenced(self, ring: PageRing) -> None:
        for page_id, page in ring.pages():
            self.kv[page_id].copy_(page, non_blocking=True)
            self.copy_done.record()
            self.copy_done.synchronize()

    def pull_staged(self, ring: PageRing) -> list[torch.Tensor]:
        staged = []
        for page_id, page in ring.pages():
            staged.append(page.to(self.device, non_blocking=True))
        torch.cuda.synchronize(self.device)
        return staged

    def pull_side_blocking(self, ring: PageRing) -> None:
        for page_id, page in ring.pages():
            with torch.cuda.stream(self.side):
                self.kv[page_id].copy_(page)

    def pull_side_ordered(self, ring: PageRing) -> None:
        for page_id, page in ring.pages():
            with torch.cuda.stream(self.side):
                self.kv[page_id].copy_(page, non_blocking=True)
            torch.cuda.current_stream(self.device).wait_stream(self.side)

    def checksums(self, ring: PageRing) -> list[int]:
        return list(self.pool.map(self._checksum, (page for _, page in ring.pages())))

    def checksums_owned(self, ring: PageRing) -> list[int]:
        return list(self.tp.imap(self._checksum, (page.clone() for _, page in ring.pages())))

    def audit_later(self, ring: PageRing) -> None:
        for page_id, page in ring.pages():
            threading.Timer(0.5, self._audit, args=(page_id, page)).start()

    def audit_settled(self, ring: PageRing) -> None:
        for page_id, page in ring.pages():
            self.pending[page_id] = self.pool.submit(self._checksum, page)
            self._settle(page_id)

    def audit_batched(self, ring: PageRing) -> None:
        for page_id, page in ring.pages():
            self.pending[page_id] = self.pool.submit(self._checksum, page)
            if len(self.pending) == 8:
                self._settle_all()
        self._settle_all()
