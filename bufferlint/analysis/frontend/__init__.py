"""Files to facts: the per-module index, syntax helpers, the syntax check, text scans and the vocabulary matcher."""
