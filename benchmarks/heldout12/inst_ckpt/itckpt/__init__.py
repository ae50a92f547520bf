"""Checkpoint restore for an inference worker with InstantTensor (GPU-direct safetensors reads)."""
