"""A tiny registry of per-document hooks the pipeline runs."""

from __future__ import annotations

from typing import Callable

import numpy as np

DocHook = Callable[[int, np.ndarray], None]


class HookRegistry:
    def __init__(self) -> None:
        self._hooks: list[DocHook] = []

    def register(self, fn: DocHook) -> DocHook:
        self._hooks.append(fn)
        return fn

    def __iter__(self):
        return iter(self._hooks)
