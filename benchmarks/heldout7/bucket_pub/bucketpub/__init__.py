"""Trainer-to-rollout weight broadcast: checkpoint buckets read into reused buffers, sent zero-copy over ZMQ."""
