"""Host side of an RL rollout engine: sampled tokens and log-probs come back from the GPU."""
