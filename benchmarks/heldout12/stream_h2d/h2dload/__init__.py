"""Streams safetensors shards with the RunAI streamer straight into device parameters."""
