"""Overlapped decode: the next step is launched before the last step's tokens reach the host."""
