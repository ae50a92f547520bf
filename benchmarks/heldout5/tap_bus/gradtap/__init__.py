"""Activation/gradient taps: records arrive in one reused buffer and fan out to subscribers."""
