"""Moves sampled tokens to the host and hands them to detokenization (overlapped decode loop)."""
