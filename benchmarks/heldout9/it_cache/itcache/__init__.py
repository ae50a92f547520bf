"""GPU-side checkpoint cache for fast expert swaps, read with InstantTensor (pre-0.1.9 readers)."""
