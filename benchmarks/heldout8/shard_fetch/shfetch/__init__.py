"""Overlapped checkpoint loading for the serving fleet (RunAI streamer through SGLang)."""
