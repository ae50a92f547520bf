"""A torchtune-style checkpoint loader over the RunAI Model Streamer, with pluggable sinks."""
