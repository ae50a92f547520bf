"""Post-sampling host work of a decode loop: token ids, logprobs and stop flags fetched from the GPU."""
