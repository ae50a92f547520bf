"""Restores trainer checkpoints onto the GPU with InstantTensor."""
