"""Attribute names that streaming readers set on the tensors they lend out."""

RUNAI_ATTR = "_sglang_runai_streamer_tensor"
