"""LoRA adapter hot-swap: adapters read from safetensors files into a serving engine's slots."""
