"""Asynchronous checkpointing: device state copied to host without stalling the training step."""
