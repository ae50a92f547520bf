"""Weight loading as a pipeline of generator stages over vLLM's RunAI iterator."""
