"""Built-in loaders: RunAI streaming with different overlap strategies."""
from __future__ import annotations

import concurrent.futures
import logging
from concurrent.futures import FIRST_EXCEPTION, ThreadPoolExecutor, wait
from typing import Iterable, Iterator, Tuple

import torch
from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator
from vllm.model_executor.model_loader.weight_utils import (
    runai_safetensors_weights_iterator as vllm_runai_iterator,
)

from .config import LoadConfig, register_loader

logger = logging.getLogger(__name__)


def _copy_param(param: torch.nn.Parameter, loaded: torch.Tensor) -> None:
    if param.shape != loaded.shape:
        raise ValueError(f"shape mismatch: {tuple(param.shape)} vs {tuple(loaded.shape)}")
    with torch.no_grad():
        param.data.copy_(loaded)


class BaseLoader:
    load_format = ""

    def __init__(self, config: LoadConfig) -> None:
        self.config = config
        self.pool = ThreadPoolExecutor(max_workers=config.num_threads, thread_name_prefix="wload")

    def iter_weights(self, files: Iterable[str]) -> Iterator[Tuple[str, torch.Tensor]]:
        return runai_safetensors_weights_iterator(list(files))

    def load_weights(self, model: torch.nn.Module, files: Iterable[str]) -> int:
        raise NotImplementedError

    def close(self) -> None:
        self.pool.shutdown(wait=True)


@register_loader("runai_streamer")
class StreamingLoader(BaseLoader):
    """One task per tensor; every task is waited for once the stream is exhausted."""

    def load_weights(self, model, files):
        params = dict(model.named_parameters())
        futures = []
        for name, weight in self.iter_weights(files):
            if name not in params:
                logger.debug("skipping %s", name)
                continue
            futures.append(self.pool.submit(_copy_param, params[name], weight))
        done, not_done = wait(futures, return_when=FIRST_EXCEPTION)
        for fut in done:
            fut.result()
        return len(done)


@register_loader("runai_streamer_cloned")
class ClonedStreamingLoader(BaseLoader):
    """Same overlap, but every task gets its own copy of the tensor."""

    def load_weights(self, model, files):
        params = dict(model.named_parameters())
        futures = []
        for name, weight in self.iter_weights(files):
            if name in params:
                futures.append(self.pool.submit(_copy_param, params[name], weight.clone()))
        wait(futures)
        return len(futures)


@register_loader("runai_streamer_lockstep")
class LockstepLoader(BaseLoader):
    """Uses the pool only to keep the copy off the main thread's stack; one at a time."""

    def load_weights(self, model, files):
        params = dict(model.named_parameters())
        loaded = 0
        for name, weight in self.iter_weights(files):
            param = params.get(name)
            if param is None:
                continue
            fut = self.pool.submit(_copy_param, param, weight)
            concurrent.futures.wait([fut])
            fut.result()
            loaded += 1
        return loaded


@register_loader("runai_streamer_windowed")
class WindowedLoader(BaseLoader):
    """Bounds the tasks in flight to ``config.max_inflight`` to cap memory."""

    def load_weights(self, model, files):
        params = dict(model.named_parameters())
        inflight = []
        total = 0
        for name, weight in self.iter_weights(files):
            inflight.append(self.pool.submit(_copy_param, params[name], weight))
            if len(inflight) >= self.config.max_inflight:
                wait(inflight)
                total += len(inflight)
                inflight.clear()
        wait(inflight)
        return total + len(inflight)


@register_loader("vllm_runai_streamer")
class VllmStreamingLoader(BaseLoader):
    """vLLM's RunAI iterator; tasks are waited for at the end like StreamingLoader."""

    def iter_weights(self, files):
        return vllm_runai_iterator(list(files), use_tqdm_on_load=False)

    def load_weights(self, model, files):
        params = dict(model.named_parameters())
        futures = [self.pool.submit(_copy_param, params[n], w) for n, w in self.iter_weights(files)]
        wait(futures)
        return len(futures)
