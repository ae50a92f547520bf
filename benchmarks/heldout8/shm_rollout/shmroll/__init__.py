"""Rollout collection from env worker processes through shared memory (verl-style)."""
