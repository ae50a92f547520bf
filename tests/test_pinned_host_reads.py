"""BL005 on copies into pinned buffers: a pinned allocation is host memory (PyTorch pins host
pages), so ``pinned[:n].copy_(gpu, non_blocking=True)`` fills it later and a host read before
a synchronisation reads stale bytes, wherever the buffer is kept (a field, a slice of it).
Pinned buffers are tracked in runs that enable BL006 (pack key ``pinned-allocations``):
there these are found. Known gap: a run with the default rules does not track them (serving
BL005 too cost 12% more CPU on sglang 0.5.23 for one finding, measured 2026-12-07), so it
misses them; the second test records that, and fails once the gap closes."""

from __future__ import annotations

from pathlib import Path

from bufferlint.api import CheckOptions, check

WORKER = '''\
import torch


class Worker:
    def __init__(self, n: int) -> None:
        self.host_ids = torch.empty(n, dtype=torch.int64, pin_memory=True)
        self.pageable = torch.empty(n, dtype=torch.int64)

    def into_a_slice(self, ids):
        n = ids.shape[0]
        self.host_ids[:n].copy_(ids, non_blocking=True)
        return self.host_ids[:n].tolist()

    def into_a_slice_synchronised(self, ids):
        n = ids.shape[0]
        self.host_ids[:n].copy_(ids, non_blocking=True)
        torch.cuda.synchronize()
        return self.host_ids[:n].tolist()

    def into_pageable_memory(self, ids):
        self.pageable.copy_(ids, non_blocking=True)  # a copy to pageable memory returns when done
        return self.pageable.tolist()


def local_slice(ids):
    host = torch.empty(4, dtype=torch.int64, pin_memory=True)
    host[:2].copy_(ids, non_blocking=True)
    return host[:2].tolist()
'''


def test_pinned_destinations_are_followed_where_pinned_buffers_are_tracked(tmp_path: Path) -> None:
    (tmp_path / "worker.py").write_text(WORKER)
    report = check(CheckOptions(paths=[tmp_path], project_root=tmp_path, cache=False, extend_select=["BL006"]))
    found = sorted((f.rule, f.span.line) for f in report.findings)
    assert found == [("BL005", 12), ("BL005", 28)]


def test_known_gap_the_default_rules_do_not_track_pinned_buffers(tmp_path: Path) -> None:
    (tmp_path / "worker.py").write_text(WORKER)
    report = check(CheckOptions(paths=[tmp_path], project_root=tmp_path, cache=False))
    assert [f for f in report.findings if f.rule == "BL005"] == []
