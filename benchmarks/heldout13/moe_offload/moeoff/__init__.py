"""MoE expert offload: experts streamed from safetensors, kept on the host or uploaded on demand."""
