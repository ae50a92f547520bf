"""Optimizer-state and activation offload through rings of pinned staging buffers (DeepSpeed style)."""
