"""Unguarded overlap strategies tried for the reload (benchmarked in the reload RFC)."""

from __future__ import annotations

import asyncio
import contextlib
import functools
import threading
from concurrent.futures import Future, ThreadPoolExecutor

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from rlreload.dispatch import copy_param

_POOL = ThreadPoolExecutor(max_workers=4, thread_name_prefix="reload")


def offloaded(fn):
    """Runs the decorated function on the reload pool and returns its future."""

    @functools.wraps(fn)
    def submit(*args, **kwargs) -> Future:
        return _POOL.submit(fn, *args, **kwargs)

    return submit


@offloaded
def copy_async(param: torch.nn.Parameter, w: torch.Tensor) -> None:
    copy_param(param, w)


class CopyThread(threading.Thread):
    def __init__(self, param: torch.nn.Parameter, w: torch.Tensor) -> None:
        super().__init__(daemon=True)
        self.param = param
        self.w = w

    def run(self) -> None:
        copy_param(self.param, self.w)


def reload_threads(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    threads = []
    for name, w in runai_safetensors_weights_iterator(files):
        t = CopyThread(params[name], w); t.start()
        threads.append(t)
    for t in threads:
        t.join()


def reload_threads_joined(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        t = CopyThread(params[name], w); t.start(); t.join()


def reload_offloaded(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    futs = []
    for name, w in runai_safetensors_weights_iterator(files):
        futs.append(copy_async(params[name], w))
    for f in futs:
        f.result()


def reload_offloaded_waited(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        copy_async(params[name], w).result()


async def reload_wrapped(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    waiting = []
    for name, w in runai_safetensors_weights_iterator(files):
        waiting.append(asyncio.wrap_future(_POOL.submit(copy_param, params[name], w)))
    await asyncio.gather(*waiting)


async def reload_wrapped_awaited(model: torch.nn.Module, files: list[str]) -> None:
    params = dict(model.named_parameters())
    for name, w in runai_safetensors_weights_iterator(files):
        await asyncio.wrap_future(_POOL.submit(copy_param, params[name], w))


def reload_tied(model: torch.nn.Module, files: list[str], tied: dict[str, str]) -> None:
    """Tied weights (embed/lm_head) are copied once every shard has been read, at stack exit."""
    params = dict(model.named_parameters())
    with contextlib.ExitStack() as stack:
        for name, w in runai_safetensors_weights_iterator(files):
            copy_param(params[name], w)
            if name in tied:
                stack.callback(copy_param, params[tied[name]], w)


def reload_tied_cloned(model: torch.nn.Module, files: list[str], tied: dict[str, str]) -> None:
    params = dict(model.named_parameters())
    with contextlib.ExitStack() as stack:
        for name, w in runai_safetensors_weights_iterator(files):
            copy_param(params[name], w)
            if name in tied:
                stack.callback(copy_param, params[tied[name]], w.clone())


class ReloadSession:
    """Collects the norms' weights for the post-load fusion pass."""

    def __init__(self, model: torch.nn.Module) -> None:
        self.params = dict(model.named_parameters())
        self._norms: dict[str, torch.Tensor] = {}

    def reload(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            if name.endswith("norm.weight"):
                self._norms.update({name: w})
            else:
                copy_param(self.params[name], w)
        self._fuse_norms()

    def reload_cloning(self, files: list[str]) -> None:
        for name, w in runai_safetensors_weights_iterator(files):
            if name.endswith("norm.weight"):
                self._norms.update({name: w.clone()})
            else:
                copy_param(self.params[name], w)
        self._fuse_norms()

    def _fuse_norms(self) -> None:
        for name, w in self._norms.items():
            copy_param(self.params[name], w * 1.0)
        self._norms.clear()
