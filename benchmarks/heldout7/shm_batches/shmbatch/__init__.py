"""A data loader whose worker processes hand batches over in shared-memory slots."""
