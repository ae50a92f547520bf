"""Checkpoint restore and optimizer-state offload through pinned staging buffers."""
