"""Checkpoint loading for a serving engine through InstantTensor (copy defaults to True from 0.1.9)."""
