"""Rollout-side weight sync: reload the actor's new checkpoint into the inference engine."""
