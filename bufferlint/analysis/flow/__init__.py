"""Control flow: the per-function graph the transfer stage walks."""
