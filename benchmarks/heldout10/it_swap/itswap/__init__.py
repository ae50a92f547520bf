"""Hot-swaps LoRA adapters and a draft model into a running server with InstantTensor."""
