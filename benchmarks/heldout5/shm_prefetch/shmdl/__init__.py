"""A dataloader whose decode workers fill shared-memory slots the trainer reads in place."""
