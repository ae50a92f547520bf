"""Decode-side KV-cache pull for disaggregated prefill: pages arrive in a pinned host ring."""
