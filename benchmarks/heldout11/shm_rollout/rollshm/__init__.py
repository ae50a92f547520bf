"""Rollout-side receiver of trainer weight buckets over shared memory."""
