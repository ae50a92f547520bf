"""Host tier of a paged KV cache: blocks spilled to pinned memory and prefetched back."""
