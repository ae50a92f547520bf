"""Reloads rollout-engine weights from the trainer's safetensors shards after each RL step."""
