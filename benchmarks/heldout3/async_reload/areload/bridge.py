"""The loader runs on its own thread and hands weights to the server's event loop."""
from __future__ import annotations

import asyncio
import threading

from sglang.srt.model_loader.weight_utils import runai_safetensors_weights_iterator

from .apply import ParamSink


def push_blocking(loop: asyncio.AbstractEventLoop, sink: ParamSink, files: list[str]) -> int:
    n = 0
    for name, w in runai_safetensors_weights_iterator(files):
        fut = asyncio.run_coroutine_threadsafe(sink.put_weight(name, w), loop)
        fut.result()
        n += 1
    return n


def push_fire_and_forget(loop: asyncio.AbstractEventLoop, sink: ParamSink, files: list[str]) -> None:
    for name, w in runai_safetensors_weights_iterator(files):
        asyncio.run_coroutine_threadsafe(sink.put_weight(name, w), loop)


def start_loader_thread(loop: asyncio.AbstractEventLoop, sink: ParamSink, files: list[str]) -> threading.Thread:
    th = threading.Thread(target=push_blocking, args=(loop, sink, files), name="weight-push", daemon=True)
    th.start()
    return th
