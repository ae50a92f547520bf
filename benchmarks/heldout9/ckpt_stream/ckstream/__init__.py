"""Streaming trainer checkpoints into the rollout engine and the learner's master copy."""
