"""Marker names set on borrowed tensors by the loaders we sit on top of."""

import torch

RUNAI_MARKER = "_sglang_runai_streamer_tensor"
MMAP_MARKER = "_hf_mmap_view"
BORROW_MARKERS = (RUNAI_MARKER, MMAP_MARKER)


def is_borrowed(w: torch.Tensor) -> bool:
    """True for views of a buffer some loader will refill."""
    return any(getattr(w, m, False) for m in BORROW_MARKERS)
