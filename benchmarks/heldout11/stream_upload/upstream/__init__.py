"""Uploads a checkpoint streamed by the RunAI Model Streamer (0.16.2: one reused pinned buffer) to the GPU."""
