"""Draft-model weight loading for speculative decoding (EAGLE-style heads)."""
