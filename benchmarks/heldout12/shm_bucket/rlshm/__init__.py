"""Actor side of a learner -> actor shared-memory channel (weights and observation batches)."""
