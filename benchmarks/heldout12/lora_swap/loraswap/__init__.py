"""Hot-swaps LoRA adapters into a running model from safetensors streamed by the RunAI streamer."""
