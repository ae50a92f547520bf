"""Broadcasts a checkpoint streamed from object storage to inference replicas over ZMQ."""
