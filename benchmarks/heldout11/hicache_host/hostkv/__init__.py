"""Host tier of a hierarchical KV cache: pinned stages loaded back to the GPU, blocks spilled to host."""
