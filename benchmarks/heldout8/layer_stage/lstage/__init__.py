"""Streams a checkpoint to the GPU layer by layer, overlapping the host-to-device copies."""
