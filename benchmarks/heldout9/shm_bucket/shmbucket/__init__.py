"""Weight sync from the trainer to the rollout engine through one shared-memory block."""
