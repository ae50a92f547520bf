"""Host side of the rollout sampler: token ids and logprobs brought back for detokenization."""
