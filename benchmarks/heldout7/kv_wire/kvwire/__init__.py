"""Decode-side KV-cache receiver for prefill/decode disaggregation (LMCache style)."""
