"""Relays KV frames from a prefill node's TCP stream to the decode side's stores."""
