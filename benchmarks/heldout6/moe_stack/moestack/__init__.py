"""Loads mixture-of-experts checkpoints streamed by vLLM's RunAI iterator into stacked expert weights."""
