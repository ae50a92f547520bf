"""Rollout-side receiver of trainer weights over one shared-memory block, bucket by bucket."""
