"""Detokenizer output path: step outputs encoded into fixed frames and published over ZMQ."""
