"""BL005 on copies into pinned buffers, with the default rules: a pinned allocation is host
memory (PyTorch pins host pages), so ``pinned[:n].copy_(gpu, non_blocking=True)`` fills it
later and a host read before a synchronisation reads stale bytes, wherever the buffer is kept
(a field, a slice of it). The pack key ``pinned-allocations`` serves BL005 as well as BL006,
so this holds in a run that does not select the preview rule."""

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


def test_pinned_destinations_are_followed_with_the_default_rules(tmp_path: Path) -> None:
    (tmp_path / "worker.py").write_text(WORKER)
    report = check(CheckOptions(paths=[tmp_path], project_root=tmp_path, cache=False))
    found = sorted((f.rule, f.span.line) for f in report.findings)
    assert found == [("BL005", 12), ("BL005", 28)]
