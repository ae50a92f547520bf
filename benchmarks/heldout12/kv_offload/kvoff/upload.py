"""Load-back of host KV blocks and block tables to the device through pinned staging buffers."""

from __future__ import annotations

import logging
import time

import numpy as np
import torch

from kvoff.config import TierConfig

log = logging.getLogger(__name__)
NO_BLOCK = torch.tensor(-1, dtype=torch.int32)


class BlockUploader:
    def __init__(self, cfg: TierConfig) -> None:
        self.cfg = cfg
        n, width = cfg.max_blocks_per_step, cfg.block_tokens * cfg.head_dim
        self.device_rows = torch.empty((n, width), dtype=cfg.dtype, device=cfg.device)
        self.side = torch.cuda.Stream()

    def _stage_shape(self) -> tuple[int, int]:
        return self.cfg.max_blocks_per_step, self.cfg.block_tokens * self.cfg.head_dim

    def gather_unsynced(self, host_pool: torch.Tensor, steps: list[torch.Tensor]) -> None:
        stage = torch.empty(self._stage_shape(), dtype=self.cfg.dtype, pin_memory=True)
        for idx in steps:
            torch.index_select(host_pool, 0, idx, out=stage[: idx.numel()])
            self.device_rows[: idx.numel()].copy_(stage[: idx.numel()], non_blocking=True)

    def gather_blocking_event(self, host_pool: torch.Tensor, steps: list[torch.Tensor]) -> None:
        stage = torch.empty(self._stage_shape(), dtype=self.cfg.dtype, pin_memory=True)
        uploaded = torch.cuda.Event(blocking=True)
        for idx in steps:
            uploaded.synchronize()
            torch.index_select(host_pool, 0, idx, out=stage[: idx.numel()])
            self.device_rows[: idx.numel()].copy_(stage[: idx.numel()], non_blocking=True)
            uploaded.record()

    def clear_then_fill_sleep(self, chunks: list[np.ndarray]) -> None:
        stage = torch.empty(self._stage_shape(), dtype=self.cfg.dtype).pin_memory()
        for chunk in chunks:
            time.sleep(0.0005)
            stage.zero_()
            stage.numpy()[: len(chunk)] = chunk
            self.device_rows.copy_(stage, non_blocking=True)

    def clear_then_fill_default_stream(self, chunks: list[np.ndarray]) -> None:
        stage = torch.empty(self._stage_shape(), dtype=self.cfg.dtype).pin_memory()
        for chunk in chunks:
            torch.cuda.default_stream().synchronize()
            stage.zero_()
            stage.numpy()[: len(chunk)] = chunk
            self.device_rows.copy_(stage, non_blocking=True)

    def copyto_sync_before_copy(self, chunks: list[np.ndarray]) -> None:
        stage = torch.empty(self._stage_shape(), dtype=self.cfg.dtype, pin_memory=True)
        rows = stage.numpy()
        for chunk in chunks:
            np.copyto(rows[: len(chunk)], chunk)
            torch.cuda.synchronize()
            self.device_rows[: len(chunk)].copy_(stage[: len(chunk)], non_blocking=True)

    def copyto_side_stream(self, chunks: list[np.ndarray]) -> None:
        stage = torch.empty(self._stage_shape(), dtype=self.cfg.dtype, pin_memory=True)
        rows = stage.numpy()
        for chunk in chunks:
            np.copyto(rows[: len(chunk)], chunk)
            with torch.cuda.stream(self.side):
                self.device_rows[: len(chunk)].copy_(stage[: len(chunk)], non_blocking=True)
            self.side.synchronize()


def upload_offsets_async(steps: list[torch.Tensor], dev_offsets: torch.Tensor) -> None:
    offsets = torch.zeros(dev_offsets.numel(), dtype=torch.int32, pin_memory=True)
    for lens in steps:
        torch.cumsum(lens, 0, out=offsets[1 : lens.numel() + 1])
        dev_offsets.copy_(offsets, non_blocking=True)


def upload_offsets_blocking(steps: list[torch.Tensor], dev_offsets: torch.Tensor) -> None:
    offsets = torch.zeros(dev_offsets.numel(), dtype=torch.int32, pin_memory=True)
    for lens in steps:
        torch.cumsum(lens, 0, out=offsets[1 : lens.numel() + 1])
        dev_offsets.copy_(offsets, non_blocking=False)


def upload_tables_query_once(masks: list[torch.Tensor], filled: torch.Tensor, dev_table: torch.Tensor) -> None:
    side = torch.cuda.Stream()
    table = torch.empty(dev_table.shape, dtype=torch.int32, pin_memory=True)
    for mask in masks:
        if not side.query():
            log.debug("previous table upload still in flight")
        torch.where(mask, filled, NO_BLOCK, out=table)
        with torch.cuda.stream(side):
            dev_table.copy_(table, non_blocking=True)


def upload_tables_side_sync(masks: list[torch.Tensor], filled: torch.Tensor, dev_table: torch.Tensor) -> None:
    side = torch.cuda.Stream()
    table = torch.empty(dev_table.shape, dtype=torch.int32, pin_memory=True)
    for mask in masks:
        side.synchronize()
        torch.where(mask, filled, NO_BLOCK, out=table)
        with torch.cuda.stream(side):
            dev_table.copy_(table, non_blocking=True)


class ClampedTable:
    """Clamps the scheduler's block table to the pool's range and uploads it, once per step."""

    def __init__(self, rows: int, cols: int, device: str = "cuda") -> None:
        self.table = torch.full((rows, cols), -1, dtype=torch.int32, pin_memory=True)
        self.dev_table = torch.empty((rows, cols), dtype=torch.int32, device=device)

    def step(self, block_limit: int) -> torch.Tensor:
        self.table.clamp_(-1, block_limit)
        self.dev_table.copy_(self.table, non_blocking=True)
        return self.dev_table


class FencedClampedTable:
    def __init__(self, rows: int, cols: int, device: str = "cuda") -> None:
        self.table = torch.full((rows, cols), -1, dtype=torch.int32, pin_memory=True)
        self.dev_table = torch.empty((rows, cols), dtype=torch.int32, device=device)
        self.uploaded = torch.cuda.Event()

    def step(self, block_limit: int) -> torch.Tensor:
        self.uploaded.synchronize()
        self.table.clamp_(-1, block_limit)
        self.dev_table.copy_(self.table, non_blocking=True)
        self.uploaded.record()
        return self.dev_table
