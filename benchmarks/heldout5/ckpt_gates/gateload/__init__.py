"""Streamed checkpoint loading on top of SGLang's RunAI iterator, with our own async gates."""
