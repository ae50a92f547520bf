"""Scheduler -> detokenizer output path over ZMQ, zero-copy."""
