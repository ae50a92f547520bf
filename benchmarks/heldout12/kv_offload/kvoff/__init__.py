"""Host-memory tier for a paged KV cache: load-back uploads and spills through pinned staging."""
