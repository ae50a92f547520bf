"""Deferral policies: may this weight be copied on a worker thread after the loop moves on?"""

from __future__ import annotations

import enum
import inspect
import os

import torch

from rlreload.markers import RUNAI_MARKER, SYNC_ENV

BIG = 1 << 16


class LoadMode(enum.Enum):
    INLINE = "inline"
    DEFERRED = "deferred"


def classify(w: torch.Tensor) -> LoadMode:
    """Streamed views are loaded inline; large host tensors are deferred."""
    if getattr(w, RUNAI_MARKER, False):
        return LoadMode.INLINE
    return LoadMode.DEFERRED if w.is_cpu and w.numel() >= BIG else LoadMode.INLINE


def defer_walrus(w: torch.Tensor) -> bool:
    if (borrowed := getattr(w, RUNAI_MARKER, False)):
        return not borrowed
    return w.is_cpu


def defer_detached(w: torch.Tensor) -> bool:
    """Looks at the detached tensor, so that autograd state does not matter."""
    return w.is_cpu and not getattr(w.detach(), RUNAI_MARKER, False)


def defer_static(w: torch.Tensor) -> bool:
    return w.is_cpu and not inspect.getattr_static(w, RUNAI_MARKER, False)


def defer_string_flag(w: torch.Tensor) -> bool:
    if getattr(w, RUNAI_MARKER, False) == "1":
        return False
    return w.is_cpu


def defer_in_dir(w: torch.Tensor) -> bool:
    if RUNAI_MARKER in dir(w):
        return False
    return w.numel() >= BIG


def defer_flat(w: torch.Tensor) -> bool:
    flat = w.view(-1)
    return flat.is_cpu and not hasattr(flat, RUNAI_MARKER)


def defer_by_mode(w: torch.Tensor) -> bool:
    return classify(w) is LoadMode.DEFERRED


def defer_unless_env(w: torch.Tensor) -> bool:
    """Operators set RL_RELOAD_SYNC=1 to load everything inline when debugging."""
    if os.environ.get(SYNC_ENV) == "1":
        return False
    return w.is_cpu
