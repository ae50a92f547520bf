"""Reuse across runs: the cache's three levels (unchanged files, unchanged interfaces, replayed edits)."""
