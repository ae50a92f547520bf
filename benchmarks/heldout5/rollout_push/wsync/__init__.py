"""Trainer -> rollout-engine weight sync over a ZMQ IPC socket, in fixed-size buckets."""
