"""Applies weight buckets and observation batches from the shared block."""

from __future__ import annotations

import logging
from concurrent.futures import ALL_COMPLETED, Future, ThreadPoolExecutor, wait
from multiprocessing.shared_memory import SharedMemory
from types import SimpleNamespace

import numpy as np
import torch

from rlshm.channel import BucketChannel, Entry

log = logging.getLogger(__name__)
_DTYPES = {"bf16": torch.bfloat16, "f32": torch.float32, "i64": torch.int64}


def _apply(param: torch.Tensor, t: torch.Tensor) -> None:
    with torch.no_grad():
        param.copy_(t)


class BucketActor:
    def __init__(self, shm_name: str, channel: BucketChannel, model: torch.nn.Module) -> None:
        self.shm = SharedMemory(name=shm_name)
        self.channel = channel
        self.model = model
        self.params = dict(model.named_parameters())
        self.pool = ThreadPoolExecutor(max_workers=4)
        self.inflight: list[Future] = []
        self.latest = SimpleNamespace()
        self.obs_history: list[np.ndarray] = []
        self.headers: list = []
        self.casted: dict[str, torch.Tensor] = {}

    def _tensor(self, e: Entry) -> torch.Tensor:
        raw = torch.frombuffer(self.shm.buf, dtype=torch.uint8, count=e.nbytes, offset=e.offset)
        return raw.view(_DTYPES[e.dtype]).view(e.shape)

    def snapshot_views(self) -> None:
        while True:
            layout = self.channel.wait_filled()
            if not layout:
                break
            self.latest = SimpleNamespace(**{e.name: self._tensor(e) for e in layout})
            self.channel.mark_consumed()

    def snapshot_copies(self) -> None:
        while True:
            layout = self.channel.wait_filled()
            if not layout:
                break
            self.latest = SimpleNamespace(**{e.name: self._tensor(e).clone() for e in layout})
            self.channel.mark_consumed()

    def record_obs_views(self) -> None:
        while True:
            layout = self.channel.wait_filled()
            if not layout:
                break
            for e in layout:
                self.obs_history.append(np.ndarray(e.shape, np.float32, buffer=self.shm.buf, offset=e.offset))
            self.channel.mark_consumed()

    def record_obs_copies(self) -> None:
        while True:
            layout = self.channel.wait_filled()
            if not layout:
                break
            for e in layout:
                self.obs_history.append(np.array(np.ndarray(e.shape, np.float32, buffer=self.shm.buf, offset=e.offset)))
            self.channel.mark_consumed()

    def register_tables(self, holder: torch.nn.Module) -> None:
        layout = self.channel.wait_filled() or []
        for e in layout:
            arr = np.frombuffer(self.shm.buf, dtype=np.int64, count=e.nbytes // 8, offset=e.offset)
            holder.register_buffer(e.name.replace(".", "_"), torch.from_numpy(arr), persistent=False)
        self.channel.mark_consumed()

    def register_tables_copied(self, holder: torch.nn.Module) -> None:
        layout = self.channel.wait_filled() or []
        for e in layout:
            arr = np.frombuffer(self.shm.buf, dtype=np.int64, count=e.nbytes // 8, offset=e.offset)
            holder.register_buffer(e.name.replace(".", "_"), torch.tensor(arr), persistent=False)
        self.channel.mark_consumed()

    def cast_bf16_bucket(self) -> None:
        """Buckets of this channel are always bf16 (the learner's param dtype)."""
        for e in self.channel.wait_filled() or []:
            self.casted[e.name] = self._tensor(e).to(torch.bfloat16)
        self.channel.mark_consumed()

    def cast_fp32_bucket(self) -> None:
        for e in self.channel.wait_filled() or []:
            self.casted[e.name] = self._tensor(e).to(torch.float32)
        self.channel.mark_consumed()

    def keep_headers(self) -> None:
        while self.channel.wait_filled():
            self.headers.append(self.shm.buf[0:64])
            self.channel.mark_consumed()

    def keep_header_bytes(self) -> None:
        while self.channel.wait_filled():
            self.headers.append(bytes(self.shm.buf[0:64]))
            self.channel.mark_consumed()

    def apply_lagged(self) -> None:
        while True:
            layout = self.channel.wait_filled()
            if not layout:
                break
            for f in self.inflight:
                f.result()
            self.inflight = [self.pool.submit(_apply, self.params[e.name], self._tensor(e)) for e in layout]
            self.channel.mark_consumed()

    def apply_waited(self) -> None:
        while True:
            layout = self.channel.wait_filled()
            if not layout:
                break
            futs = [self.pool.submit(_apply, self.params[e.name], self._tensor(e)) for e in layout]
            wait(futs, return_when=ALL_COMPLETED)
            self.channel.mark_consumed()
        log.info("weights applied")
