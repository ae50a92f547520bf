"""Consumers of the ring: pinning, augmentation, logging, evaluation samples."""

from __future__ import annotations

import concurrent.futures as cf
import queue
import threading
from dataclasses import dataclass
from multiprocessing.pool import ThreadPool

import numpy as np
import torch

from shmdl.ring import IMAGE_SHAPE, SlotRing


def augment(images: torch.Tensor) -> torch.Tensor:
    return torch.flip(images, dims=(-1,)) * 0.5


@dataclass
class Batch:
    images: torch.Tensor
    labels: np.ndarray


class Prefetcher:
    def __init__(self, ring: SlotRing) -> None:
        self.ring = ring
        self.to_pin: queue.Queue = queue.Queue(maxsize=4)
        self.pool = cf.ThreadPoolExecutor(max_workers=2)
        self.legacy_pool = ThreadPool(2)
        self.eval_images: list[torch.Tensor] = []
        self.sample_labels: np.ndarray | None = None
        self.replay: list[Batch] = []
        self.pinned: queue.Queue = queue.Queue(maxsize=4)
        threading.Thread(target=self._pin_loop, daemon=True).start()

    def _pin_loop(self) -> None:
        while (images := self.to_pin.get()) is not None:
            self.pinned.put(images.pin_memory())

    # hand-offs --------------------------------------------------------------------------------

    def feed_pinner(self) -> None:
        while (slot := self.ring.next_slot()) is not None:
            self.to_pin.put(self.ring.images(slot))
            self.ring.hand_back(slot)

    def feed_pinner_cloned(self) -> None:
        while (slot := self.ring.next_slot()) is not None:
            self.to_pin.put(self.ring.images(slot).clone())
            self.ring.hand_back(slot)

    def augment_inline(self) -> list[torch.Tensor]:
        out = []
        while (slot := self.ring.next_slot()) is not None:
            fut = self.pool.submit(augment, self.ring.images(slot))
            out.append(fut.result())
            self.ring.hand_back(slot)
        return out

    def augment_overlapped(self) -> list[torch.Tensor]:
        futs = []
        while (slot := self.ring.next_slot()) is not None:
            futs.append(self.pool.submit(augment, self.ring.images(slot)))
            self.ring.hand_back(slot)
        return [f.result() for f in futs]

    def augment_split(self) -> list[torch.Tensor]:
        out = []
        while (slot := self.ring.next_slot()) is not None:
            images = self.ring.images(slot)
            parts = [self.pool.submit(augment, images[i::2]) for i in range(2)]
            cf.wait(parts)
            out.extend(p.result() for p in parts)
            self.ring.hand_back(slot)
        return out

    def augment_legacy(self) -> list[torch.Tensor]:
        out = []
        while (slot := self.ring.next_slot()) is not None:
            res = self.legacy_pool.apply_async(augment, (self.ring.images(slot),))
            self.ring.hand_back(slot)
            out.append(res.get())
        return out

    def augment_legacy_waited(self) -> list[torch.Tensor]:
        out = []
        while (slot := self.ring.next_slot()) is not None:
            res = self.legacy_pool.apply_async(augment, (self.ring.images(slot),))
            out.append(res.get())
            self.ring.hand_back(slot)
        return out

    # kept past the hand-back ----------------------------------------------------------------

    def collect_eval(self, n: int) -> None:
        while len(self.eval_images) < n and (slot := self.ring.next_slot()) is not None:
            self.eval_images.append(self.ring.images(slot)[:4])
            self.ring.hand_back(slot)

    def collect_eval_owned(self, n: int) -> None:
        while len(self.eval_images) < n and (slot := self.ring.next_slot()) is not None:
            self.eval_images.append(self.ring.images(slot)[:4].clone())
            self.ring.hand_back(slot)

    def remember_labels(self) -> None:
        slot = self.ring.next_slot()
        if slot is None:
            return
        self.sample_labels = self.ring.labels(slot)
        self.ring.hand_back(slot)

    def remember_labels_owned(self) -> None:
        slot = self.ring.next_slot()
        if slot is None:
            return
        self.sample_labels = self.ring.labels(slot).copy()
        self.ring.hand_back(slot)

    def fill_replay(self) -> None:
        while (slot := self.ring.next_slot()) is not None:
            self.replay.append(Batch(self.ring.images(slot), self.ring.labels(slot)))
            self.ring.hand_back(slot)

    def fill_replay_owned(self) -> None:
        while (slot := self.ring.next_slot()) is not None:
            self.replay.append(Batch(self.ring.images(slot).clone(), self.ring.labels(slot).copy()))
            self.ring.hand_back(slot)

    def raw_views(self) -> list[np.ndarray]:
        kept = []
        while (slot := self.ring.next_slot()) is not None:
            kept.append(np.ndarray(IMAGE_SHAPE, dtype=np.float32, buffer=self.ring.blocks[slot].buf))
            self.ring.hand_back(slot)
        return kept
