"""The attribute SGLang's RunAI iterator sets on every tensor it yields (a view of its buffer)."""

RUNAI_MARKER = "_sglang_runai_streamer_tensor"
SYNC_ENV = "RL_RELOAD_SYNC"
