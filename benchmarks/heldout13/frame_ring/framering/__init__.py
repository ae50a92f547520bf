"""Multimodal frame prefetcher: decoded video frames in a shared-memory slot ring."""
