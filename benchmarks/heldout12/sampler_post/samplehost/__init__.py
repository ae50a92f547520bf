"""Post-processing of sampled tokens on the host: ids, logprobs, stop flags, histograms."""
