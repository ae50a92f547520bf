"""Checkpoint loaders for the serving fleet (RunAI streamer + a shared copy pool)."""
