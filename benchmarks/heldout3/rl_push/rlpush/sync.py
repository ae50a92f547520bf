"""Push the trainer's freshly saved weights to the rollout engines."""
from __future__ import annotations

import queue
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator
from vllm.model_executor.model_loader.weight_utils import runai_safetensors_weights_iterator as vllm_stream

from .buckets import iter_buckets, iter_owned_buckets
from .policy import background_ok, offloadable

CAP = 512 << 20


class EngineClient:
    def send_one(self, name: str, t: torch.Tensor) -> None: ...

    def send_bucket(self, names: list[str], tensors: list[torch.Tensor]) -> None: ...


class WeightPusher:
    def __init__(self, engine: EngineClient, files: list[str]) -> None:
        self.engine = engine
        self.files = files
        self.pool = ThreadPoolExecutor(max_workers=4)
        self.outbox: queue.Queue[tuple[str, torch.Tensor]] = queue.Queue()

    def push_buckets(self) -> None:
        for b in iter_buckets(runai_safetensors_weights_iterator(self.files), CAP):
            self.engine.send_bucket(b.names, b.tensors)

    def push_owned_buckets(self) -> None:
        threads = []
        for b in iter_owned_buckets(runai_safetensors_weights_iterator(self.files), CAP):
            t = threading.Thread(target=self.engine.send_bucket, args=(b.names, b.tensors))
            t.start()
            threads.append(t)
        for t in threads:
            t.join()

    def push_each_detached(self) -> None:
        for name, w in runai_safetensors_weights_iterator(self.files):
            threading.Thread(target=self.engine.send_one, args=(name, w), daemon=True).start()

    def push_each_joined(self) -> None:
        for name, w in runai_safetensors_weights_iterator(self.files):
            sender = threading.Thread(target=self.engine.send_one, args=(name, w))
            sender.start()
            sender.join()

    def push_via_outbox(self) -> None:
        for name, w in runai_safetensors_weights_iterator(self.files):
            self.outbox.put((name, w))

    def push_via_outbox_owned(self) -> None:
        for name, w in runai_safetensors_weights_iterator(self.files):
            self.outbox.put((name, w.clone()))

    def push_policy(self) -> None:
        futs: list[Future] = []
        for name, w in runai_safetensors_weights_iterator(self.files):
            if background_ok(w):
                futs.append(self.pool.submit(self.engine.send_one, name, w))
            else:
                self.engine.send_one(name, w)
        wait(futs)

    def push_offloadable(self) -> None:
        futs: list[Future] = []
        for name, w in runai_safetensors_weights_iterator(self.files):
            if offloadable(w):
                futs.append(self.pool.submit(self.engine.send_one, name, w))
            else:
                self.engine.send_one(name, w)
        wait(futs)

    def push_from_vllm_stream(self) -> None:
        futs = [self.pool.submit(self.engine.send_one, n, w) for n, w in vllm_stream(self.files)]
        wait(futs)

    def snapshot(self) -> dict[str, torch.Tensor]:
        return dict(runai_safetensors_weights_iterator(self.files))

    def push_mapped(self) -> None:
        owned = ((n, w.clone()) for n, w in runai_safetensors_weights_iterator(self.files))
        list(self.pool.map(lambda kv: self.engine.send_one(*kv), owned))
