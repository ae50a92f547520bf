"""KV-cache offload: pinned staging for uploads, pinned spill buffers for downloads."""
