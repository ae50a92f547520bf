"""Brings sampled tokens and their metadata from the GPU to the detokenizer, every decode step."""
