"""Overlapped weight loading for the serving fleet (SGLang's RunAI iterator underneath)."""
