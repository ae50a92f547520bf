"""Deployment switches (module constants, overridden by the launcher's env)."""

HOST_DEVICE = "cpu"
OVERLAP_D2H = True
