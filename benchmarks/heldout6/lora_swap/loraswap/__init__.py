"""Hot-swaps LoRA adapters streamed from object storage into a running server."""
