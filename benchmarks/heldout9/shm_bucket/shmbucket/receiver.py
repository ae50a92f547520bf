"""Receiving weight buckets into the engine's model (and a CPU reference copy)."""

import pickle
import threading
from concurrent.futures import Future, ThreadPoolExecutor, wait

import torch

from .channel import BucketChannel, Entry, view_of


def apply_bucket(model: torch.nn.Module, weights: dict[str, torch.Tensor]) -> None:
    params = dict(model.named_parameters())
    for name, w in weights.items():
        params[name].data.copy_(w)


def copy_into(dst: torch.Tensor, src: torch.Tensor) -> None:
    dst.copy_(src)


class Receiver:
    def __init__(self, chan: BucketChannel, model: torch.nn.Module) -> None:
        self.chan = chan
        self.model = model
        self.device = torch.device("cpu")  # the reference policy for KL runs on the host
        self.weights: dict[str, torch.Tensor] = {}
        self.last_bucket: list[torch.Tensor] = []
        self.meta: object = None

    def sync_assign(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            sd = {e.name: view_of(window, e) for e in layout}
            self.model.load_state_dict(sd, strict=False, assign=True)
            self.chan.sock.send(b"")

    def sync_copy(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            sd = {e.name: view_of(window, e) for e in layout}
            self.model.load_state_dict(sd, strict=False, assign=False)
            self.chan.sock.send(b"")

    def sync_reference(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            for e in layout:
                self.weights[e.name] = view_of(window, e).to(self.device)
            self.chan.sock.send(b"")

    def sync_reference_copied(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            for e in layout:
                self.weights[e.name] = view_of(window, e).to(self.device, copy=True)
            self.chan.sock.send(b"")

    def sync_keep_last(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            views = [view_of(window, e) for e in layout]
            self.last_bucket = views
            self.chan.sock.send(b"")

    def sync_keep_last_owned(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            views = [view_of(window, e) for e in layout]
            self.last_bucket = [v.clone() for v in views]
            self.chan.sock.send(b"")

    def read_meta(self, nbytes: int) -> None:
        self.meta = pickle.loads(self.chan.block.buf[:nbytes])
        self.chan.sock.send(b"")

    def read_meta_lazily(self, nbytes: int) -> None:
        self.meta = self.chan.block.buf[:nbytes]
        self.chan.sock.send(b"")

    def sync_threaded(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            worker = threading.Thread(target=apply_bucket, args=(self.model, {e.name: view_of(window, e) for e in layout}))
            worker.start()
            self.chan.sock.send(b"")
            worker.join()

    def sync_threaded_joined(self) -> None:
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            worker = threading.Thread(target=apply_bucket, args=(self.model, {e.name: view_of(window, e) for e in layout}))
            worker.start()
            worker.join()
            self.chan.sock.send(b"")

    def sync_pooled(self, pool: ThreadPoolExecutor) -> None:
        params = dict(self.model.named_parameters())
        window = self.chan.window()
        futures: list[Future] = []
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            for e in layout:
                futures.append(pool.submit(copy_into, params[e.name].data, view_of(window, e)))
            self.chan.sock.send(b"")
        wait(futures)

    def sync_pooled_waited(self, pool: ThreadPoolExecutor) -> None:
        params = dict(self.model.named_parameters())
        window = self.chan.window()
        while (layout := self.chan.sock.recv_pyobj()) is not None:
            futures = [pool.submit(copy_into, params[e.name].data, view_of(window, e)) for e in layout]
            wait(futures)
            self.chan.sock.send(b"")
