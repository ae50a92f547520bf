"""Trainer-to-rollout weight broadcast: shards staged through pinned host buffers, then NCCL."""
