"""Speculative-decoding verification: accepted lengths and tokens come back to the host each step."""
