"""Loads a checkpoint to the GPU from the RunAI streamer, through pinned staging rings."""
