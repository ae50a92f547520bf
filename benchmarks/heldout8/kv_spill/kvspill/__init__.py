"""Spills KV blocks to host memory and disk, and brings them back (LMCache-style)."""
