"""A KV-cache tier below the GPU: blocks evicted into a pinned slab, spilled to disk, restored."""
